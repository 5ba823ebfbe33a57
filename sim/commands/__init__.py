"""The shell: the commands (``backoff-sim run``, ``explore``, ``phase``, the ``backoff-simulator``
drop-in), their console scripts' guard (``entry``), stdout handling (``stdout``), stop signals
(``interrupt``), the bounded way out (``teardown``), progress lines (``progress``) and the
garbage collector's policy while files are written (``collector``).

The library below never imports this package (tests/test_import_graph.py): it takes these
policies from its caller through ``sim.runs.caller``, and importing this package installs the
shell's own there, whoever imports it first (a command, the app, a test).
"""

from __future__ import annotations

from sim.commands import collector, interrupt, teardown
from sim.runs.caller import install

install(hold_stops=interrupt.stop_signals_held, check_stop=interrupt.raise_if_stopped,
        on_abandon=teardown.on_emergency, forget=teardown.discard, on_final=teardown.on_exit,
        ending=teardown.is_armed, settled=interrupt.settle, shield_thread=interrupt.shield_thread,
        prepare_children=teardown.start_resource_tracker, collector_frozen=collector.frozen)
