"""Outputs declared once (``sim.export.outputs.OUTPUTS``): README's table (generated, see
``test_readme_tables``), the help and the files written all follow the one list."""

from __future__ import annotations

import re

from sim.commands.cli import RUN_DESCRIPTION
from sim.export import output_paths
from sim.export.outputs import OUTPUTS, markdown_table
from sim.models import CONTROLS


def test_help_lists_every_output_in_writing_order() -> None:
    # Two lists: the files of every simulation, then those of servers that keep series, each
    # in writing order.
    listed = re.findall(r"^  <title>(_[a-z]+\.[a-z]+)", RUN_DESCRIPTION, flags=re.M)
    assert listed == ([o.suffix for o in OUTPUTS if o.needs is None]
                      + [o.suffix for o in OUTPUTS if o.needs == "keeps_series"])


def test_help_names_the_servers_that_keep_series() -> None:
    keeping = {name for name, cls in CONTROLS.items() if cls.CAPS.keeps_series}
    help_names = re.search(r"servers that reply \(([^)]*)\)", RUN_DESCRIPTION).group(1)
    assert set(help_names.split(", ")) == keeping


def test_readme_table_lists_every_output_with_the_kinds_it_applies_to() -> None:
    """The generated table (``markdown_table``): one row per output, in writing order, naming
    the kinds whose features the file needs."""
    rows = markdown_table().splitlines()[2:]
    assert [re.match(r"\| `<title>(\S+)` \|", row).group(1) for row in rows] == [o.suffix for o in OUTPUTS]
    for o, row in zip(OUTPUTS, rows):
        named = set(re.findall(r"`([A-Za-z]+Server)`", row))
        assert named == ({name for name, cls in CONTROLS.items() if cls.CAPS.has(o.needs)}
                         if o.needs else set())


def test_output_paths_follow_the_list() -> None:
    assert list(output_paths("T", ".")) == [o.kind for o in OUTPUTS]
