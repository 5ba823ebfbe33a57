"""README's generated tables are what the code makes now (``docs/readme_tables.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "readme_tables.py"


def _script():
    spec = importlib.util.spec_from_file_location("readme_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_tables_are_up_to_date() -> None:
    tables = _script()
    stale = tables.stale(tables.README.read_text(encoding="utf-8"))
    assert not stale, f"README.md: the {', '.join(stale)} table is out of date; run `{tables.COMMAND}`"


def test_a_changed_list_makes_the_table_stale() -> None:
    """A table edited by hand (or a list changed without regenerating) is found, and the rewrite
    puts back exactly what the code makes."""
    tables = _script()
    text = tables.README.read_text(encoding="utf-8")
    edited = text.replace("| `<title>_runs.csv` |", "| `<title>_all_runs.csv` |")
    assert edited != text
    assert tables.stale(edited) == ["outputs"]
    assert tables.rewrite(edited) == text


def test_a_missing_marker_is_named() -> None:
    tables = _script()
    text = tables.README.read_text(encoding="utf-8").replace(tables.end_marker("outputs"), "")
    with pytest.raises(ValueError, match="end of the outputs table"):
        tables.rewrite(text)


def test_the_contents_link_every_section_to_its_anchor() -> None:
    tables = _script()
    text = tables.README.read_text(encoding="utf-8")
    contents = text.split(tables.begin_marker("contents"))[1].split(tables.end_marker("contents"))[0]
    assert "- [Quick start (Python 3.10+)](#quick-start-python-310)" in contents
    assert "  - [Incidents](#incidents)" in contents  # a part, under its section
    assert tables.anchor("Python: `import sim`") == "python-import-sim"
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert len([line for line in contents.splitlines() if line.startswith("- [")]) == len(sections)
