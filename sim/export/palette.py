"""Theme palettes read from ``themes/*.toml``, without Textual, and which colour each event and
series takes in them.

The PNG export and the terminal tables (``sim.report``) colour with a ``Palette``; the terminal
app turns the same files into Textual themes (``tui/theme.py``), so a person who switches theme
gets charts and PNGs in matching colours. An event's colour is that of its broad kind
(``CODE_KINDS``), a time series' a theme's series colour (``SERIES_COLOURS``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from sim.core import events as ev
from sim.vocabulary.errors import UserError
from themes import THEMES_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_THEME = "backoff-dark"
# The broad kinds of events, each a colour of a theme's ``events`` table (and a word the app's
# log filter understands).
KIND_REQUEST = "request"
KIND_BACKOFF = "backoff"
KIND_SUCCESS = "success"
KIND_FAILURE = "failure"
KIND_GIVE_UP = "give_up"
KIND_SERVER = "server"
EVENT_KINDS = (KIND_REQUEST, KIND_BACKOFF, KIND_SUCCESS, KIND_FAILURE, KIND_GIVE_UP, KIND_SERVER)
CODE_KINDS: dict[int, str] = {
    ev.CLIENT_REQUESTS_WRITE: KIND_REQUEST,
    ev.CLIENT_REQUESTS_VERSION: KIND_REQUEST,
    ev.CLIENT_BACKS_OFF: KIND_BACKOFF,
    ev.CLIENT_GIVES_UP: KIND_GIVE_UP,
    ev.SERVER_ACCEPTS: KIND_SUCCESS,
    ev.SERVER_COMMITS: KIND_SUCCESS,
    ev.SERVER_REJECTS: KIND_FAILURE,
    ev.SERVER_ABORTS: KIND_FAILURE,
    ev.SERVER_REPORTS_VERSION: KIND_SERVER,
    ev.SERVER_TENTATIVELY_WRITES: KIND_SERVER,
    ev.SERVER_DECREMENTS: KIND_SERVER,
    ev.CLIENT_TIMES_OUT: KIND_FAILURE,
    ev.CLIENT_SUCCEEDS: KIND_SUCCESS,
    ev.SERVER_QUEUES: KIND_SERVER,
    ev.SERVER_COMPLETES: KIND_SERVER,
    ev.SERVER_PAUSES: KIND_FAILURE,
    ev.SERVER_RESUMES: KIND_SERVER,
    ev.CLIENT_RETRY_DENIED: KIND_GIVE_UP,
    ev.BREAKER_OPENS: KIND_FAILURE,
    ev.BREAKER_HALF_OPENS: KIND_SERVER,
    ev.BREAKER_CLOSES: KIND_SUCCESS,
    ev.CLIENT_CALL_REFUSED: KIND_FAILURE,  # the call fails fast; the chain may try it again
    ev.SERVER_DROPS: KIND_FAILURE,
    ev.SERVER_INCIDENT_STARTS: KIND_FAILURE,  # as an outage's pause and resume
    ev.SERVER_INCIDENT_ENDS: KIND_SERVER,
    ev.HOST_EJECTED: KIND_FAILURE,  # a fleet's balancer takes a host out (sim.models.fleet)
    ev.HOST_RETURNS: KIND_SERVER,
    ev.HOST_UNHEALTHY: KIND_FAILURE,
    ev.HOST_HEALTHY: KIND_SERVER,
    ev.CLIENT_HEDGES: KIND_REQUEST,  # another copy of an attempt (sim.models.hedging)
}
# Each time series' colour, an index into a theme's ``series.colors``. The order of the dark
# theme's colours makes offered blue, retries orange, goodput green, rejected red.
SERIES_COLOURS: dict[str, int] = {"offered": 0, "retries": 1, "accepted": 4, "goodput": 2,
                                  "rejected": 3, "timed_out": 5, "in_service": 4, "queued": 5,
                                  "server_drops": 6, "limit_refused": 1, "hedges": 7}
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
