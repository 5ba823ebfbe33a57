"""Outputs declared once (``sim.export.outputs.OUTPUTS``): README's table, the help and the
files written all follow the one list."""

from __future__ import annotations

import re
from pathlib import Path

from sim.cli import RUN_DESCRIPTION
from sim.export import output_paths
from sim.export.outputs import OUTPUTS
from sim.models import CONTROLS

README = Path(__file__).resolve().parents[1] / "README.md"


def _run_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## What `backoff-sim run` writes")
    return text[start:text.index("\n## ", start + 1)]


def test_readme_lists_every_output_and_no_other() -> None:
    section = _run_section()
    named = set(re.findall(r"`<title>(_[a-z]+\.[a-z]+)`", section))
    assert named == {o.suffix for o in OUTPUTS}
    table = set(re.findall(r"^\| `<title>(_[a-z]+\.[a-z]+)` \|", section, flags=re.M))
    assert table == {o.suffix for o in OUTPUTS if not o.series_only}  # the rest: the paragraph


def test_help_lists_every_output_in_writing_order() -> None:
    listed = re.findall(r"^  <title>(_[a-z]+\.[a-z]+)", RUN_DESCRIPTION, flags=re.M)
    assert listed == [o.suffix for o in OUTPUTS]


def test_help_and_readme_name_the_servers_that_keep_series() -> None:
    keeping = {name for name, cls in CONTROLS.items() if cls.CAPS.keeps_series}
    help_names = re.search(r"servers that reply \(([^)]*)\)", RUN_DESCRIPTION).group(1)
    readme_names = re.search(r"servers that reply \(([^)]*)\)", _run_section()).group(1)
    assert set(help_names.split(", ")) == keeping
    assert set(readme_names.replace("`", "").split(", ")) == keeping


def test_output_paths_follow_the_list() -> None:
    assert list(output_paths("T", ".", is_open=True)) == [o.kind for o in OUTPUTS]
    assert list(output_paths("T", ".")) == [o.kind for o in OUTPUTS if not o.series_only]
