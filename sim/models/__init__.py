"""The models a simulation is made of, one module per family, each registering its classes:
backoff strategies (``strategies``, ``library_strategies``), contention controls (``controls``),
servers that reply (``servers``, ``flaky``, ``pool`` with ``service_times``), workloads
(``workloads``, ``trace``), outages (``outage``), incidents (``incidents``) and the client
models (``clients``, which records its policy chains' events through ``policy_events``, and
``open_clients`` for calls that overlap). Models import only the core and small shared modules
(``sim.vocabulary.errors``, ``sim.vocabulary.outcomes``, ``sim.vocabulary.params``, ``sim.vocabulary.bounds``, ``sim.vocabulary.inputs``).

Importing this package imports every family, so the registries below are complete: nothing
imports a model module only for its registration side effect."""

from __future__ import annotations

from collections.abc import Iterable

from sim.core import events as ev
from sim.models import clients, controls, flaky, library_strategies, outage, pool, servers, strategies, workloads  # noqa: F401
from sim.models import incidents, trace  # noqa: F401
from sim.models.controls import CONTROLS, DECLARED_FEATURES, Capabilities
from sim.models.strategies import STRATEGIES
from sim.models.workloads import WORKLOADS

__all__ = ["CONTROLS", "STRATEGIES", "WORKLOADS", "marking_events", "recorded_capabilities"]


def _recordable(caps: Capabilities) -> frozenset[int]:
    """Every event code a run against a server kind with ``caps`` may record, its clients' too."""
    from sim.models.clients import client_events

    return caps.events | client_events(caps)


def marking_events(feature: str) -> frozenset[int]:
    """Event codes that only runs against server kinds offering ``feature`` record (from the
    declared ``Capabilities`` and client models): their presence in an events file marks a run
    of such a kind."""
    with_feature: set[int] = set()
    without: set[int] = set()
    for cls in CONTROLS.values():
        (with_feature if cls.CAPS.has(feature) else without).update(_recordable(cls.CAPS))
    return frozenset(with_feature - without)


def recorded_capabilities(codes: Iterable[int]) -> Capabilities:
    """What the server kind of a recorded run offers, as far as its event codes show (a replay:
    an events file does not name its server): each feature whose ``marking_events`` it holds."""
    present = frozenset(int(c) for c in codes)
    marked = {feature: bool(present & marking_events(feature))
              for feature in DECLARED_FEATURES}
    return Capabilities(events=frozenset(c for c in present if ev.is_server_event(c)), **marked)
