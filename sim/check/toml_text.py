"""TOML text of the configs and layers a check builds (for ``--explain``, ``--app`` and the
files a user may run by hand): values inline, tables and arrays of tables as headers."""

from __future__ import annotations

import json
import math
from typing import Any

from sim.settings.imported.layer import Layer


def value(v: Any) -> str:
    """One TOML value: strings quoted as JSON quotes them (a subset of TOML's basic strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v) if not math.isnan(v) else "nan"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"no TOML value for {type(v).__name__}")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def _is_tables(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _table(lines: list[str], prefix: str, data: dict[str, Any]) -> None:
    """``data``'s scalars and inline values, then its sub-tables and arrays of tables."""
    nested = {k: v for k, v in data.items() if isinstance(v, dict) and k in _HEADED}
    arrays = {k: v for k, v in data.items() if _is_tables(v) and k in _HEADED}
    for k, v in data.items():
        if k not in nested and k not in arrays:
            lines.append(f"{_key(k)} = {value(v)}")
    for k, v in nested.items():
        lines += ["", f"[{prefix}{k}]"]
        _table(lines, f"{prefix}{k}.", v)
    for k, items in arrays.items():
        for item in items:
            lines += ["", f"[[{prefix}{k}]]"]
            _table(lines, f"{prefix}{k}.", item)


# Keys written as headers ([[simulation]], [[simulation.tiers]], [simulation.fleet], [[layer]]);
# every other table stays inline, as a config writes strategies and incidents.
_HEADED = frozenset({"simulation", "tiers", "fleet", "layer"})


def document(data: dict[str, Any], comment: str = "") -> str:
    """A whole TOML document (``comment`` lines first, each after ``# ``)."""
    lines = [f"# {line}" if line else "#" for line in comment.splitlines()]
    _table(lines, "", data)
    return "\n".join(lines).lstrip("\n") + "\n"


def layers_toml(layers: list[Layer]) -> str:
    """The layers as a backoff-sim settings file (``kind = "toml"``), each with its counts and
    where it came from in comments."""
    out = ['kind = "toml"']
    for layer in layers:
        out += ["", f"# {layer.name}: {layer.counts()}, from {layer.source} ({layer.kind})"]
        out += [f"# note: {note}" for note in layer.notes]
        out.append("[[layer]]")
        out.append(f"name = {value(layer.name)}")
        out.append(f"strategy = {value(layer.entry)}")
        if layer.timeout is not None:
            out.append(f"timeout = {value(float(layer.timeout))}")
        knob = layer.knob
        out.append("knob = false" if knob is None else
                   f"knob = {value({'path': knob.path, 'values': list(knob.values), 'label': knob.label})}")
        if layer.total_timeout is not None:
            out.append(f"total_timeout = {value(float(layer.total_timeout))}")
        if layer.fleet:
            out.append(f"fleet = {value(layer.fleet)}")
    return "\n".join(out) + "\n"
