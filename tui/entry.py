"""``backoff-sim``'s console script: ``tui.main`` imported and run inside ``sim.commands.entry``'s guard,
so a Ctrl-C during the imports is one line and status 130, not a traceback; the process then ends
as ``sim.commands.entry.exit_process`` says."""

from __future__ import annotations


def main() -> None:
    from sim.commands.entry import exit_process, run_entry

    exit_process(run_entry("tui.main"))
