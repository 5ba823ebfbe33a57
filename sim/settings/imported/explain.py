"""The TOML that settings become (``--explain``): each layer's strategy entry with both counts
("4 attempts (3 retries)"), what it assumes, and the worst case over the stack.

``worst_case_attempts`` is the one place the stack's amplification is computed: a call that fails
everywhere is tried ``attempts`` times by each layer, for each try of the layer above, so the server
sees the product of the layers' attempts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from sim.settings.imported.layer import Layer


def worst_case_attempts(layers: Sequence[Layer]) -> int:
    """Attempts at the server per call under total failure: the product over the layers."""
    return math.prod(layer.attempts for layer in layers)


def toml_value(value: Any) -> str:
    """A value as TOML (inline tables and arrays on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def explain(layers: Sequence[Layer]) -> str:
    """The settings as TOML for a ``[[simulation]]``: its ``strategies`` (one entry per layer,
    in the order a call passes them), the ``[simulation.fleet]`` keys they imply, and comments
    with each layer's counts and notes and the product over the layers."""
    out = ["# Retry settings read by backoff-sim, in the order a call passes them."]
    for i, layer in enumerate(layers, start=1):
        out.append(f"# {i}. {layer.source}: {layer.kind} {layer.name!r}: {layer.counts()}")
        if layer.timeout is not None:
            out.append(f"#    each attempt times out after {layer.timeout:g} ms")
        if layer.total_timeout is not None:
            out.append(f"#    the call's deadline: {layer.total_timeout:g} ms")
        if layer.knob is not None:
            out.append(f"#    main knob: {layer.knob.label} (entry key {layer.knob.path})")
        for note in layer.notes:
            out.append(f"#    - {note}")
    total = worst_case_attempts(layers)
    if len(layers) > 1:
        product = " × ".join(str(layer.attempts) for layer in layers)
        out.append(f"# Worst case at the server: {product} = {total} attempts per call ({total - 1} retries)")
    elif layers:
        out.append(f"# Worst case at the server: {total} attempt{'s' if total != 1 else ''} per call")
    if len(layers) > 1:
        out.append("# Each entry is one layer's retries. In one [[simulation]] they run as alternatives; stacked,")
        out.append("# the first is the clients' and each next one the retry = { ... } of a [[simulation.tiers]] below.")
    out.append("strategies = [")
    for layer in layers:
        out.append(f"  {toml_value(layer.entry)},  # {layer.counts()}")
    out.append("]")
    fleet: dict[str, Any] = {}
    for layer in layers:
        fleet.update(layer.fleet)
    if fleet:
        out.append("")
        out.append("# [simulation.fleet] keys the settings imply (add hosts = N and a balancer):")
        out.append("[simulation.fleet]")
        for key, value in fleet.items():
            out.append(f"{key} = {toml_value(value)}")
    return "\n".join(out) + "\n"
