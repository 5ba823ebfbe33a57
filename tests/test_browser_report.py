"""The report in a real browser (headless Chromium, ``tests/browser.py``), opened from a local
file: its tables' numbers as the DOM holds them are the CSVs', its charts are there and drawn,
the screenshot is not blank, a header sorts its table and a strategy's box hides its parts."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from browser import Browser, distinct_colours


TABLES_JS = """JSON.stringify(Array.from(document.querySelectorAll('table.sortable')).map(t => [
  t.dataset.csv, Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.textContent))]))"""


@pytest.fixture(scope="module")
def report(outage_report) -> tuple[Path, Path]:
    return outage_report


@pytest.fixture(scope="module")
def tab(report):
    _, page = report
    with Browser(size=(1280, 1000)) as browser:
        tab = browser.page("about:blank")
        tab.goto(page.resolve().as_uri())
        yield tab


def test_the_doms_tables_are_the_csvs(report, tab) -> None:
    import json

    out, _ = report
    tables = dict(json.loads(tab.evaluate(TABLES_JS)))
    assert set(tables) == {"Tiny_outage_metrics.csv", "Tiny_outage_latency.csv"}
    for name, rows in tables.items():
        assert rows == list(csv.reader(io.StringIO((out / name).read_text(encoding="utf-8"))))


def test_the_charts_are_drawn_and_the_page_is_not_blank(tab, tmp_path: Path) -> None:
    charts = tab.evaluate("""Array.from(document.querySelectorAll('figure.chart svg')).map(s => {
        const box = s.getBoundingClientRect(); return [box.width, box.height,
        s.querySelectorAll('path').length]; })""")
    assert len(charts) == 2  # the time series and the latency per client
    for width, height, paths in charts:
        assert width > 300 and height > 200 and paths > 10
    shot = tab.screenshot(tmp_path / "report.png")
    # The verdict, the lists and a chart's top in view: text, rules and lines in many colours
    # (a blank page has one; a page of text alone, a few dozen antialiased greys).
    assert distinct_colours(shot) > 200


def test_a_header_sorts_its_table_and_a_box_hides_a_strategy(tab) -> None:
    table = "document.querySelector('table[data-csv=\"Tiny_outage_latency.csv\"]')"
    column = tab.evaluate(f"Array.from({table}.tHead.rows[0].cells).findIndex(c => c.textContent === 'requests')")
    cells = f"Array.from({table}.tBodies[0].rows).map(r => Number(r.cells[{column}].textContent))"
    tab.evaluate(f"{table}.tHead.rows[0].cells[{column}].click()")
    ascending = tab.evaluate(cells)
    assert ascending == sorted(ascending) and len(set(ascending)) > 1
    tab.evaluate(f"{table}.tHead.rows[0].cells[{column}].click()")
    assert tab.evaluate(cells) == sorted(ascending, reverse=True)

    box = "document.querySelector('input.strategy-toggle')"
    prefix = tab.evaluate(f"{box}.dataset.prefix")
    parts = f"Array.from(document.querySelectorAll('[id^=\"{prefix}\"]'))"
    assert tab.evaluate(f"{parts}.length") >= 2  # its panels in both charts
    assert tab.evaluate(f"{parts}.every(e => getComputedStyle(e).display !== 'none')")
    tab.evaluate(f"{box}.click()")
    assert tab.evaluate(f"{parts}.every(e => getComputedStyle(e).display === 'none')")
    tab.evaluate(f"{box}.click()")
    assert tab.evaluate(f"{parts}.every(e => getComputedStyle(e).display !== 'none')")
