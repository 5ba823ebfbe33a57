"""A picture of the phase pane (P, issue 22) at 80x24: the tiny outage's portrait at 30
clients (computed in ~0.2 s) with the run's state marked inside the outage.

After a deliberate change: ``pytest -m "slow or not slow" --snapshot-update
tests/test_snapshots_phase.py``, then look at the new SVG before committing it.
"""

from __future__ import annotations

from tui_support import TINY_OUTAGE

from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.state.source import ConfigSource


async def phase_in_the_outage(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("P", "g", *"25000", "enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_phase_pane_80x24(snap_compare) -> None:
    app = BackoffApp(ConfigSource(load_config(TINY_OUTAGE)), theme="backoff-dark", sweep_workers=1,
                     out_dir=".")
    assert snap_compare(app, terminal_size=(80, 24), run_before=phase_in_the_outage)
