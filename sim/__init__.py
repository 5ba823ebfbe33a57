"""backoff-sim: simulate clients retrying against servers, compare retry policies and defences.

The public API (``sim/api.py``), for scripts and notebooks::

    import sim
    results = sim.run("sample.toml", seed=7)      # every simulation's sweep, on all cores
    results.rows("metrics")                       # the tables `backoff-sim run` writes, as dicts
    results.export("out")                         # and its files, byte for byte
    events = sim.record("sample.toml", simulation="...", strategy="...", clients=10)
    replayed = sim.replay("out/Title_events.csv")  # an events file's runs, as the run's tables

The library never imports Textual. Its packages, each importing only those below it
(``tests/test_import_graph.py`` holds them to it): ``core`` (event codes, histories, seeded
streams) and ``vocabulary`` (errors, units, bounds, parameter checks, input files); ``models``
and ``policies`` (clients, servers, fleets, strategies, retry policies); ``settings`` (TOML →
validated specs); ``analysis`` (every derived number of a finished run: metrics, latency,
recovery, the ★ rule); ``fluid`` (the mean-field estimate) and ``kernels`` (compiled fast paths);
``runs`` (the engine, the kernels' declared boundary, sweeps on every core); ``recording``;
``export`` and ``report`` (CSV, PNG and HTML files, terminal tables); ``exploration`` (maps and
tuning) and ``phase`` (phase portraits); then the front door here (``api``, ``arguments``,
``pipeline``, ``results``), and the shell on top: ``commands`` (the commands, their stdout,
stop signals, teardown and progress), which nothing below imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sim.api import explore, load, record, replay, run, tune
    from sim.vocabulary.errors import ConfigError, UserError
    from sim.recording import Recording
    from sim.results import ExploreResults, ReplayResults, Results, TuneResults
    from sim.runs.sweep import SweepResult
    from sim.settings.spec import Config, SimulationSpec

# Where each public name lives. They are imported on first use (PEP 562), so that the commands,
# which import ``sim.*`` modules and so this package first, start without numpy and the models.
_PUBLIC = {
    "load": "sim.api", "run": "sim.api", "record": "sim.api", "replay": "sim.api", "explore": "sim.api",
    "tune": "sim.api", "ReplayResults": "sim.results",
    "Config": "sim.settings.spec", "SimulationSpec": "sim.settings.spec", "ConfigError": "sim.vocabulary.errors",
    "UserError": "sim.vocabulary.errors", "Recording": "sim.recording", "Results": "sim.results",
    "ExploreResults": "sim.results", "TuneResults": "sim.results",
    "SweepResult": "sim.runs.sweep",  # one simulation's sweep: what ``Results`` holds
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
