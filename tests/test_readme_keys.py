"""The README's Keys section lists every binding of the app, as the key table says."""

from __future__ import annotations

from pathlib import Path

from tui.keys import COMPARE_KEYS, KEYS, LOG_KEYS
from tui.screens.help import EXTRA_KEYS

README = Path(__file__).parent.parent / "README.md"


def keys_section() -> list[str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Keys")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return [line for line in lines[start:end] if line.startswith("| `")]


def test_readme_lists_every_binding_with_its_description() -> None:
    """Every key of ``tui/keys.py`` (the app's, the event log's and the comparison view's), in
    order, then the extras."""
    rows = keys_section()
    expected = [(" ".join(f"`{name}`" for name in key.key_names.split(" ")), key.description)
                for key in (*KEYS, *LOG_KEYS, *COMPARE_KEYS)]
    expected += [(f"`{keys}`", what) for keys, what in EXTRA_KEYS]
    assert rows == [f"| {keys} | {what} |" for keys, what in expected]


def test_readme_shows_the_screenshot() -> None:
    text = README.read_text(encoding="utf-8")
    assert "![backoff-sim](docs/screenshot.svg)" in text
    svg = (README.parent / "docs" / "screenshot.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Locking_Example" in svg
