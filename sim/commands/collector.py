"""Whether this process has frozen objects out of the garbage collector, known without asking it.

The app freezes what its first frame leaves alive, and ``backoff-sim run`` what it has loaded
before it writes files; the engine leaves the collector alone while anything is frozen
(``sim.runs.engine._collector_paused``). ``gc.get_freeze_count()`` would tell, but it counts the
frozen objects one by one: ~3 ms a call with the app's, once per run, which made an in-process
sweep of short runs ten times slower. Freezing through here keeps the answer at hand.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze() -> None:
    """``gc.freeze()``, remembered."""
    global _frozen
    gc.freeze()
    _frozen = True


def unfreeze() -> None:
    """``gc.unfreeze()``: what was frozen is collected again."""
    global _frozen
    gc.unfreeze()
    _frozen = False


def frozen() -> bool:
    """Whether objects were frozen through ``freeze`` and not unfrozen since."""
    return _frozen
