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


@pytest.mark.slow  # the same bytes again: run's CSVs have their own determinism test by default
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


FLEET = FIXTURES / "tiny_fleet.toml"


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory) -> tuple[Path, Path]:
    """``backoff-sim run tiny_fleet.toml --report``: the output folder and the report (in a
    process of its own, as ``outage_report``)."""
    out = tmp_path_factory.mktemp("fleet_report")
    report = out / "report.html"
    done = sim_process("run", str(FLEET), "--out", str(out), "-j", "1", "--quiet", "--report", str(report))
    assert done.returncode == 0, done.stderr
    return out, report


def page_words(path: Path) -> list[str]:
    """The "what was simulated" lines of the page's (first) section, as a reader reads them."""
    from html import unescape

    items = re.search(r'<ul class="words">(.*?)</ul>', path.read_text(encoding="utf-8"), re.S).group(1)
    return [unescape(li) for li in re.findall(r"<li>(.*?)</li>", items, re.S)]


def test_a_fleets_report_holds_its_hosts_csv_cell_for_cell(fleet_run) -> None:
    from sim.settings.config import load_config

    out, report = fleet_run
    tables = page_tables(report)
    assert set(tables) == {"Tiny_Fleet_metrics.csv", "Tiny_Fleet_latency.csv", "Tiny_Fleet_hosts.csv"}
    for name, rows in tables.items():
        assert rows == csv_rows(out / name)
    spec = load_config(FLEET).simulations[0]
    # A row per strategy x client count x host, under the header.
    assert len(tables["Tiny_Fleet_hosts.csv"]) == 1 + len(spec.labels) * len(spec.clients) * spec.fleet.hosts


def test_a_fleets_report_says_what_the_fleet_is(fleet_run) -> None:
    from sim.models.incidents import incident_label
    from sim.settings.config import load_config
    from sim.vocabulary.units import format_duration

    _, report = fleet_run
    spec = load_config(FLEET).simulations[0]
    fleet, unit = spec.fleet, spec.time_unit
    words = page_words(report)
    [line] = [w for w in words if w.startswith("Fleet: ")]
    od, check = fleet.outlier_detection, fleet.health_check
    for said in (f"{fleet.hosts} hosts", f"{fleet.balancer} balancer", "a host the call has not tried",
                 f"after {od.consecutive_errors} consecutive errors for {format_duration(od.base_ejection_time, unit)}",
                 f"at most {od.max_ejection_percent:g}% of the hosts out",
                 f"checked every {format_duration(od.interval, unit)}",
                 f"health checks every {format_duration(check.interval, unit)}"):
        assert said in line
    for entry in spec.strategies:  # hedging is a strategy entry's (issue 35)
        [said] = [w for w in words if w.startswith(f"Strategy {entry.label!r}: ")]
        hedge = entry.hedging
        assert (f"up to {hedge.max_attempts} copies of an attempt, one more every "
                f"{format_duration(hedge.delay, unit)}") in said
        assert f"at most {hedge.budget:g}% of attempts as hedges" in said
    [incidents] = [w for w in words if w.startswith("Incidents: ")]
    crash, erring = sorted(fleet.incidents, key=lambda i: i.kind != "crash")
    assert crash.kind == "crash" and erring.hosts == tuple(range(fleet.hosts))  # the whole fleet's, every host's
    assert (f"crash (refuses every connection at once) on host {crash.hosts[0]} from "
            f"{format_duration(crash.start, unit)} to {format_duration(crash.end, unit)}") in incidents
    assert f"{incident_label(erring.incident())} on every host from {format_duration(erring.start, unit)}" in incidents


def test_a_report_without_a_fleet_says_no_fleet(outage_run) -> None:
    _, report = outage_run
    words = page_words(report)
    assert words[0].startswith("Server: ") and not [w for w in words if w.startswith("Fleet: ")]
    assert "outage (the server stops)" in next(w for w in words if w.startswith("Incidents: "))


def test_the_words_name_a_tiers_incidents_and_fleet() -> None:
    import tomllib

    from sim.models.incidents import incident_label
    from sim.report.html.words import described
    from sim.settings.config import parse_config
    from sim.vocabulary.units import format_duration

    raw = tomllib.loads((FIXTURES / "tiny_tiers.toml").read_text(encoding="utf-8"))
    tier2, tier3 = raw["simulation"][0]["tiers"]
    tier2["incidents"] = [{"start": 50.0, "duration": 100.0, "slowdown": 3.0}]
    tier2["outages"] = [{"start": 200.0, "duration": 50.0}]
    tier3["fleet"] = {"hosts": 2, "balancer": "p2c"}
    spec = parse_config(raw).simulations[0]
    words = described(spec)
    [incidents] = [w for w in words if w.startswith("Incidents: ")]
    [slow], [stop] = spec.tiers[0].incidents, spec.tiers[0].outages
    unit = spec.time_unit
    assert (f"{incident_label(slow)} on tier 2 from {format_duration(slow.start, unit)} to "
            f"{format_duration(slow.end, unit)}") in incidents
    assert f"outage of tier 2 from {format_duration(stop.start, unit)}" in incidents
    [tiers] = [w for w in words if w.startswith("Tiers below: ")]
    fleet = spec.tiers[1].fleet
    third = tiers.split("tier 3: ")[1]
    assert f" on {fleet.hosts} hosts behind a {fleet.balancer} balancer, retried by " in third
    assert " hosts behind " not in tiers.split("tier 3: ")[0]  # tier 2 is one server


def test_a_verdict_with_an_incident_but_none_judged_says_the_latency_tables_note(fleet_run) -> None:
    out, report = fleet_run
    text = report.read_text(encoding="utf-8")
    verdict = re.search(r'<div class="verdict" id="verdict">(.*?)</div>', text, re.S).group(1)
    rows = list(csv.DictReader(io.StringIO((out / "Tiny_Fleet_latency.csv").read_text())))
    largest = max(int(r["clients"]) for r in rows)
    unjudged = [r for r in rows if int(r["clients"]) == largest]
    # Nothing judged at the largest count (the case this test is about), each row saying why.
    assert unjudged and not any(r["runs"] for r in unjudged)
    notes = {r["recovery_note"] for r in unjudged} - {""}
    assert notes
    assert "no outage or incident to recover from" not in verdict
    for note in notes:
        assert note in verdict


@pytest.mark.slow  # the map's and the portrait's pages are the run page's builder with their CSVs; the run's stays
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
