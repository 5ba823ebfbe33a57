"""backoff-sim's own settings file (``kind = "toml"``): the layers of a call path written out.

A file of ``[[layer]]`` tables, one per layer the calls pass through, each with

- ``name``: what the layer is ("app", "sdk", "sidecar");
- ``strategy``: a strategy entry exactly as in a config's ``strategies = [...]`` (``{ type =
  "Constant", constant = 0.0, max_attempts = 3 }``, ``{ preset = "envoy", num_retries = 2 }``,
  with ``policies`` if any), times in ms;
- ``timeout`` (optional): the per-attempt timeout in ms; ``total_timeout`` (optional) the whole
  call's deadline in ms;
- ``fleet`` (optional): ``[simulation.fleet]`` keys the layer implies (``retry_other_host``,
  ``outlier_detection``...), used when the service is a fleet;
- ``knob`` (optional): ``{ path = "max_attempts", values = [1, 2, 3, 4] }``, the setting a check
  sweeps (a key of ``strategy``, dotted for a nested one); by default the attempt limit
  (``max_attempts``, or a preset's ``num_retries``); ``knob = false``: none.

A layer's attempts are its strategy's attempt limit (``max_attempts``, a preset's, or a
``MaxAttempts`` policy): a strategy without one is refused, as its worst case has no bound.
Every mistake is one line naming the file, the layer and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.settings.imported.layer import Knob, Layer
from sim.vocabulary.errors import ConfigError

KIND = "toml"
LAYER_KEYS = ("name", "strategy", "timeout", "total_timeout", "fleet", "knob")
MAX_LAYERS = 8  # a call path of more layers than this is no path a person configures


def read_native(path: str | Path) -> list[Layer]:
    """The layers of a ``kind = "toml"`` settings file, in the order the calls pass them."""
    from sim.settings.config import read_document

    name = str(path)
    data = read_document(path)
    kind = data.get("kind", KIND)
    if kind != KIND:
        raise ConfigError(f"kind {kind!r} is not backoff-sim's own settings", file=name, key="kind",
                          hint=f'write kind = "{KIND}", or give the file of the tool it came from')
    unknown = [k for k in data if k not in ("kind", "layer")]
    if unknown:
        raise ConfigError("is not a key of a settings file", file=name, key=unknown[0],
                          hint="a settings file holds [[layer]] tables (name, strategy, timeout, knob)")
    tables = data.get("layer")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise ConfigError("has no [[layer]] tables", file=name, key="layer",
                          hint='add [[layer]] name = "app" strategy = { type = "Constant", constant = 0.0, max_attempts = 3 }')
    if len(tables) > MAX_LAYERS:
        raise ConfigError(f"has {len(tables)} layers, at most {MAX_LAYERS}", file=name, key="layer")
    return [_layer(name, i, table) for i, table in enumerate(tables)]


def _layer(file: str, i: int, table: dict[str, Any]) -> Layer:
    where = f"layer[{i}]"
    for key in table:
        if key not in LAYER_KEYS:
            raise ConfigError("is not a layer key", file=file, key=f"{where}.{key}",
                              hint=f"a layer takes {', '.join(LAYER_KEYS)}")
    label = table.get("name", f"layer {i + 1}")
    if not isinstance(label, str) or not label.strip():
        raise ConfigError("must be a name (text)", file=file, key=f"{where}.name")
    entry = table.get("strategy")
    if not isinstance(entry, dict):
        raise ConfigError("must be a strategy entry, an inline table", file=file, key=f"{where}.strategy",
                          hint='e.g. strategy = { type = "Constant", constant = 0.0, max_attempts = 3 }')
    times = {}
    for key in ("timeout", "total_timeout"):
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            raise ConfigError(f"must be a time in ms > 0, got {value!r}", file=file, key=f"{where}.{key}")
        times[key] = None if value is None else float(value)
    fleet = table.get("fleet", {})
    if not isinstance(fleet, dict):
        raise ConfigError("must be a table of [simulation.fleet] keys", file=file, key=f"{where}.fleet")
    entry = {k: v for k, v in entry.items() if k != "name"}
    attempts = entry_attempts(entry, f"{file}: {where}.strategy")
    knob = _knob(file, where, table.get("knob"), entry, attempts)
    return Layer(source=file, kind=KIND, name=label.strip(), attempts=attempts, entry=entry,
                 timeout=times["timeout"], total_timeout=times["total_timeout"], fleet=dict(fleet), knob=knob)


def _knob(file: str, where: str, raw: Any, entry: dict[str, Any], attempts: int) -> Knob | None:
    if raw is False:  # no knob: the check sweeps nothing of this layer
        return None
    if raw is None:  # the attempt limit, from none to two more than now
        if "max_attempts" in entry:
            return Knob("max_attempts", "max_attempts", tuple(range(1, attempts + 3)))
        if "num_retries" in entry:
            return Knob("num_retries", "num_retries", tuple(range(0, attempts + 2)))
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not isinstance(raw.get("values"), list) \
            or not raw["values"] or set(raw) - {"path", "values", "label"}:
        raise ConfigError("must be { path = KEY, values = [...] }", file=file, key=f"{where}.knob")
    return Knob(raw["path"], str(raw.get("label", raw["path"])), tuple(raw["values"]))


def entry_chain(entry: dict[str, Any], where: str):
    """A strategy entry's chain (``sim.policies.chain.ChainSpec``), validated as a config
    validates it; a mistake is one line naming ``where``."""
    from sim.settings.config import parse_config

    block = {"title": "layer", "clients": [1], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.0,
             "control": "FlakyServer", "failure_rate": 0.5, "workload": "poisson", "think_time": 1.0,
             "horizon": 1.0, "strategies": [entry]}
    try:
        spec = parse_config({"simulation": [block]}, where).simulations[0]
    except ConfigError as exc:
        first = exc.errors[0] if hasattr(exc, "errors") else exc
        raise ConfigError(first.message, file=where,
                          key=None if first.key is None else first.key.removeprefix("strategies[0]."),
                          hint=first.hint) from None
    return spec.strategies[0].chain


def entry_attempts(entry: dict[str, Any], where: str) -> int:
    """The most attempts a strategy entry makes per call: the least attempt limit of its chain
    (the strategy's ``max_attempts``, a preset's, a ``MaxAttempts`` policy)."""
    from sim.policies.limits import MaxAttempts

    limits = [p.max_attempts for p in entry_chain(entry, where).ordered() if isinstance(p, MaxAttempts)]
    if not limits:
        raise ConfigError("sets no attempt limit, so its worst case has no bound", file=where,
                          hint="add max_attempts (attempts in all, the first included)")
    return min(limits)
