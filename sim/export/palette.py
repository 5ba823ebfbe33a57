"""Theme palettes read from ``themes/*.toml``, without Textual, for the PNG export.

The terminal app turns the same files into Textual themes (``tui/theme.py``), so a person who
switches theme gets charts and PNGs in matching colours.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from sim.errors import UserError
from themes import THEMES_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_THEME = "backoff-dark"
EVENT_KINDS = ("request", "backoff", "success", "failure", "give_up", "server")
_BASE_KEYS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
              "success", "warning", "error")


@dataclass(frozen=True)
class Palette:
    """A theme's colours as hex strings."""

    name: str
    dark: bool
    base: dict[str, str]
    events: dict[str, str]
    series: tuple[str, ...]

    @property
    def foreground(self) -> str:
        return self.base["foreground"]

    @property
    def background(self) -> str:
        return self.base["background"]

    def series_color(self, index: int) -> str:
        return self.series[index % len(self.series)]


def _is_color(value: object) -> bool:
    return isinstance(value, str) and len(value) == 7 and value.startswith("#") and all(
        ch in "0123456789abcdefABCDEF" for ch in value[1:])


def parse_palette(data: dict, source: str) -> Palette:
    """Validate a theme document; raise UserError naming the file and key on a mistake."""
    def bad(key: str, why: str) -> UserError:
        return UserError(f"{source}: key {key!r}: {why}")

    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise bad("name", "must be a non-empty string")
    base = {}
    for key in _BASE_KEYS:
        if not _is_color(data.get(key)):
            raise bad(key, f"must be a colour like '#1A2B3C', got {data.get(key)!r}")
        base[key] = data[key]
    events = data.get("events", {})
    for key in EVENT_KINDS:
        if not _is_color(events.get(key)):
            raise bad(f"events.{key}", f"must be a colour like '#1A2B3C', got {events.get(key)!r}")
    colors = data.get("series", {}).get("colors")
    if not isinstance(colors, list) or not colors or not all(_is_color(c) for c in colors):
        raise bad("series.colors", "must be a non-empty list of colours like '#1A2B3C'")
    return Palette(name=name, dark=bool(data.get("dark", True)), base=base,
                   events={k: events[k] for k in EVENT_KINDS}, series=tuple(colors))


def load_palette_file(path: Path) -> Palette:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read theme: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML in theme: {exc}") from None
    return parse_palette(data, str(path))


def available_themes() -> list[str]:
    """Names of the bundled themes (file stems)."""
    return sorted(p.stem for p in THEMES_DIR.glob("*.toml"))


def load_palette(name: str = DEFAULT_THEME) -> Palette:
    """A bundled theme by name; a clear error listing the choices otherwise."""
    path = THEMES_DIR / f"{name}.toml"
    if not path.is_file():
        raise UserError(f"unknown theme {name!r}: choose one of {', '.join(available_themes())}")
    return load_palette_file(path)
