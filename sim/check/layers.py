"""Settings files into layers, through one function (``read_settings``): backoff-sim's own
``.toml`` (``sim.settings.imported.native``), every other file through the readers of other
tools' files (``sim.settings.imported.read.read_settings``) where they exist."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sim.settings.imported.layer import Layer
from sim.vocabulary.errors import UserError

Reader = Callable[[Path], list[Layer]]


def _readers() -> tuple[Reader | None, Callable[[list[Layer]], str] | None]:
    """The other tools' readers and their ``explain``, or None while they are not there."""
    try:
        from sim.settings.imported import read as other  # type: ignore[attr-defined]
    except ImportError:
        return None, None
    return getattr(other, "read_settings", None), getattr(other, "explain", None)


def read_settings(path: Path) -> list[Layer]:
    """The layers one settings file describes, in the order calls pass through them."""
    path = Path(path)
    if path.suffix.lower() == ".toml":  # no other tool's settings are TOML: backoff-sim's own
        from sim.settings.imported.native import read_native

        return read_native(path)
    reader, _ = _readers()
    if reader is not None:
        return list(reader(path))
    raise UserError(f"{path}: settings of this kind cannot be read yet: give a backoff-sim settings "
                    f"file (.toml with [[layer]] tables)")


def read_layers(paths: Sequence[Path]) -> list[Layer]:
    """Every file's layers, in the order given (app, SDK, sidecar): the call path top down."""
    layers = [layer for path in paths for layer in read_settings(path)]
    if not layers:
        raise UserError("no layers: give at least one settings file")
    return layers


def explain(layers: list[Layer]) -> str:
    """The TOML the settings became: the readers' own rendering where it exists, else one
    ``[[layer]]`` table per layer, each with both counts."""
    _, theirs = _readers()
    if theirs is not None:
        return theirs(layers)
    from sim.check.toml_text import layers_toml

    return layers_toml(layers)
