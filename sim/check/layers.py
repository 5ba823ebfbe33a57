"""Settings files into layers, through one function (``read_settings``): backoff-sim's own
``.toml`` (``sim.settings.imported.native``), every other file through the readers of other
tools' files (``sim.settings.imported.read_settings``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sim.settings.imported.layer import Layer
from sim.vocabulary.errors import UserError


def read_settings(path: Path) -> list[Layer]:
    """The layers one settings file describes, in the order calls pass through them."""
    path = Path(path)
    if path.suffix.lower() == ".toml":  # no other tool's settings are TOML: backoff-sim's own
        from sim.settings.imported.native import read_native

        return read_native(path)
    from sim.settings.imported import read_settings as read_other

    return list(read_other(path))


def read_layers(paths: Sequence[Path]) -> list[Layer]:
    """Every file's layers, in the order given (app, SDK, sidecar): the call path top down."""
    layers = [layer for path in paths for layer in read_settings(path)]
    if not layers:
        raise UserError("no layers: give at least one settings file")
    return layers


def explain(layers: list[Layer]) -> str:
    """The TOML the settings became, each layer with both counts (the readers' ``explain``)."""
    from sim.settings.imported import explain as rendered

    return rendered(layers)
