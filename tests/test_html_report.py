"""``--report FILE.html``: one self-contained file whose tables are the CSVs' text and whose
verdict reads the latency table's own cells (the browser's view of it: test_browser_report.py)."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sim.commands import cli
from support import one_error_line, sim_process

FIXTURES = Path(__file__).parent / "fixtures"
OUTAGE = FIXTURES / "tiny_outage.toml"


class Tables(HTMLParser):
    """Every ``<table data-csv=NAME>``'s header and rows, as the page's text gives them."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self._rows = self.tables.setdefault(dict(attrs)["data-csv"], [])
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self._rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._rows = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def page_tables(path: Path) -> dict[str, list[list[str]]]:
    parser = Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tables


def csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture
def outage_run(outage_report) -> tuple[Path, Path]:
    return outage_report


def test_the_report_holds_the_csvs_cell_for_cell(outage_run) -> None:
    out, report = outage_run
    tables = page_tables(report)
    assert set(tables) == {"Tiny_outage_metrics.csv", "Tiny_outage_latency.csv"}
    for name, rows in tables.items():
        assert rows == csv_rows(out / name)


def test_the_report_is_one_file_that_reaches_nothing_outside(outage_run) -> None:
    _, report = outage_run
    text = report.read_text(encoding="utf-8")
    assert not re.search(r"<(link|img|iframe|object)\b", text)
    assert not re.search(r"<script\b[^>]*\bsrc=", text)
    # Every address in the page is a data: URI, a #fragment or an SVG/XML namespace name
    # (never fetched): no http(s) address in a src, href or CSS url().
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", text)
    assert text.count("<svg") == 2  # the time series and the latency chart, inline
    assert "prefers-color-scheme: dark" in text


def test_the_config_is_embedded_and_downloadable(outage_run) -> None:
    import base64

    _, report = outage_run
    text = report.read_text(encoding="utf-8")
    link = re.search(r'download="tiny_outage.toml" href="data:application/toml;charset=utf-8;base64,([^"]+)"', text)
    assert link is not None
    assert base64.b64decode(link.group(1)).decode("utf-8") == OUTAGE.read_text(encoding="utf-8")


def test_the_verdict_says_the_latency_tables_recovery_and_the_command_again(outage_run) -> None:
    out, report = outage_run
    text = report.read_text(encoding="utf-8")
    verdict = re.search(r'<div class="verdict" id="verdict">(.*?)</div>', text, re.S).group(1)
    rows = [r for r in csv.DictReader(io.StringIO((out / "Tiny_outage_latency.csv").read_text()))
            if r["clients"] == "300"]  # the verdict is at the largest client count
    assert rows
    for row in rows:  # each strategy's "recovered of judged", as the CSV counts them
        recovered, runs = row["recovered_runs"], row["runs"]
        said = f"never (0/{runs})" if recovered == "0" else f"{recovered}/{runs} recovered"
        assert f"&#x27;{row['strategy']}&#x27; {said}" in verdict
    assert "--seed 3 --report" in text and f"{OUTAGE.resolve()}" in text


def test_the_same_command_writes_the_same_report(outage_run) -> None:
    out, report = outage_run
    before = report.read_bytes()
    # The very command (the page names it, its --out and its --report), in a process of its own.
    done = sim_process("run", str(OUTAGE), "--out", str(out), "-j", "1", "--quiet", "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert report.read_bytes() == before


def test_a_report_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out = tmp_path / "out"
    done = sim_process("run", str(OUTAGE), "--out", str(out), "--report", str(blocker / "r.html"))
    assert done.returncode == 2
    assert one_error_line(done.stderr).startswith(f"error: --report {blocker / 'r.html'}: ")
    assert not out.exists()  # refused before the sweep: no file written
    done = sim_process("run", str(OUTAGE), "--out", str(out), "--report", str(tmp_path))
    assert done.returncode == 2
    assert "is a directory" in one_error_line(done.stderr)


def test_explore_and_phase_reports_hold_their_csvs(tmp_path: Path) -> None:
    explore, phase = tmp_path / "explore.html", tmp_path / "phase.html"
    assert cli.main(["explore", str(FIXTURES / "tiny_map.toml"), "--out", str(tmp_path), "-j", "1",
                     "--quiet", "--no-cache", "--report", str(explore)]) == 0
    assert cli.main(["phase", str(OUTAGE), "--out", str(tmp_path), "--grid", "3", "--runs", "2",
                     "-j", "1", "--quiet", "--report", str(phase)]) == 0
    for report, name in ((explore, "Tiny_map_explore.csv"), (phase, "Tiny_outage_phase.csv")):
        assert page_tables(report) == {name: csv_rows(tmp_path / name)}
        assert report.read_text(encoding="utf-8").count("<svg") == 1  # the map, the portrait
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temp file, renamed


def test_the_map_in_the_app_takes_no_report(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import sys; from tui.entry import main; sys.exit(main())",
                           "explore", str(FIXTURES / "tiny_map.toml"), "--app", "--report", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--report" in one_error_line(done.stderr)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow  # the map's and portrait's report above, another builder of the same page
def test_a_tunes_report_holds_its_trials_and_candidates(tmp_path: Path) -> None:
    report = tmp_path / "tune.html"
    assert cli.main(["explore", str(FIXTURES / "tiny_tune.toml"), "--out", str(tmp_path), "-j", "1",
                     "--quiet", "--no-cache", "--report", str(report)]) == 0
    names = {p.name for p in tmp_path.glob("*_tune.csv")} | {p.name for p in tmp_path.glob("*_pareto.csv")}
    assert names  # the command wrote its trials (and the candidates, when one was feasible)
    assert page_tables(report) == {name: csv_rows(tmp_path / name) for name in names}
