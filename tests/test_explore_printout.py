"""Explore's maps printed to a file or pipe, and in the HTML report: every table whole, one line
a row (the walk-through of issue 39: examples/metastability.toml's 12 columns at 120 wrapped each
"fluid ✓" onto two lines and cut the last header to "120,0…", at the report's 110 also "21,0…"),
and no line with trailing spaces."""

from __future__ import annotations

import html
import re
from pathlib import Path

from sim.commands import cli

FIXTURES = Path(__file__).parent / "fixtures"
# 14 outage lengths: a grid wider than the 120 columns a pipe gets for prose.
OUTAGES = [1000 * 1.3 ** i for i in range(14)]


def test_a_wide_map_prints_whole_to_a_pipe(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    text = (FIXTURES / "tiny_map.toml").read_text().replace(
        "values = [1000, 4000, 16000]", f"values = [{', '.join(f'{v:.0f}' for v in OUTAGES)}]")
    config = tmp_path / "wide.toml"
    config.write_text(text)
    report = tmp_path / "map.html"
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "-j", "1",
                     "--method", "fluid", "--no-cache", "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    lines = printed.split("\n")
    rows = [line for line in lines if line.startswith("│")]
    # Two strategies × two think times, each row on one line: no cell wrapped onto a second.
    assert len(rows) == 4
    assert all(line.count("fluid") == len(OUTAGES) for line in rows)
    headers = [line for line in lines if line.startswith("┃")]
    assert headers and all("…" not in line for line in headers)
    assert f"{OUTAGES[-1]:,.0f}" in headers[0]
    assert max(len(line) for line in rows) > 120  # wider than a pipe's prose: not squeezed
    assert not [line for line in lines if line != line.rstrip(" ")]
    # The HTML report's text of the maps (it printed them at 110 columns): the same rows whole.
    page = html.unescape(re.sub(r"<[^>]+>", "", report.read_text()))
    shown = [line for line in page.split("\n") if line.startswith("│")]
    assert len(shown) == 4 and all(line.count("fluid") == len(OUTAGES) for line in shown)
    assert not [line for line in page.split("\n") if line.startswith("┃") and "…" in line]
