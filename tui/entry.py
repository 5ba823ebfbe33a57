"""``backoff-sim``'s console script: ``tui.main`` imported and run inside ``sim.commands.entry``'s guard,
so a Ctrl-C during the imports is one line and status 130, not a traceback."""

from __future__ import annotations


def main() -> int:
    from sim.commands.entry import run_entry

    return run_entry("tui.main")
