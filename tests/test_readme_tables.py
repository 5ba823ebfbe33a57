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
