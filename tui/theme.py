"""Our theme files as Textual themes, plus the glyphs and styles every event view shares.

A theme file (``themes/*.toml``) is validated by ``sim.export.palette`` (which the PNG export
uses too) and turned into a ``textual.theme.Theme`` whose ``variables`` carry the event colours,
so .tcss files can say ``$event-request``. As in posting, a broken file is skipped with a notification
instead of crashing the app.
"""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from textual.app import App
from textual.theme import Theme

from sim.vocabulary.errors import UserError
# The widgets reach sim only through its public API: the colours they draw with (Palette, each
# event code's colour kind, each time series' colour, the PNG export's too) they take from here.
from sim.export.palette import CODE_KINDS, SERIES_COLOURS  # noqa: F401 (re-exported)
from sim.export.palette import DEFAULT_THEME, EVENT_KINDS, Palette, load_palette, load_palette_file
from themes import THEMES_DIR

# One glyph per kind of event: the timeline and the log pair colour with shape, so a theme's
# colours never have to carry the meaning alone (16-colour terminals, colour-blind readers).
EVENT_GLYPHS: dict[str, str] = {
    "request": "●",
    "backoff": "·",
    "success": "✓",
    "failure": "✗",
    "give_up": "⊘",
    "server": "◆",
}

# Palettes of the themes registered so far, by theme name (filled by ``register_themes``).
_PALETTES: dict[str, Palette] = {}


def variable_name(kind: str) -> str:
    """The CSS variable of an event kind: ``give_up`` → ``event-give-up`` (``$event-give-up``)."""
    return "event-" + kind.replace("_", "-")


def event_variables(palette: Palette) -> dict[str, str]:
    """The app-specific CSS variables of a palette: one ``event-*`` colour per event kind."""
    return {variable_name(kind): palette.events[kind] for kind in EVENT_KINDS}


def theme_variable_defaults() -> dict[str, str]:
    """Fallback ``event-*`` values (the default theme's) for ``App.get_theme_variable_defaults``.

    Textual parses CSS before any of our themes is active, and under its built-in themes, so an
    app whose .tcss says ``$event-request`` must return these from that method.
    """
    return event_variables(palette_for(DEFAULT_THEME))


def theme_from_palette(palette: Palette) -> Theme:
    """A Textual theme with the palette's base colours and one variable per event kind."""
    base = palette.base
    return Theme(
        name=palette.name,
        primary=base["primary"],
        secondary=base["secondary"],
        accent=base["accent"],
        foreground=base["foreground"],
        background=base["background"],
        surface=base["surface"],
        panel=base["panel"],
        success=base["success"],
        warning=base["warning"],
        error=base["error"],
        dark=palette.dark,
        variables=event_variables(palette),
    )


def register_themes(app: App, themes_dir: Path | None = None) -> list[str]:
    """Register every theme file in ``themes_dir`` (the bundled ones by default) with ``app``.

    Returns the registered names in file order. A file that does not validate is skipped and
    the user is told which one and why, with a warning notification.
    """
    names: list[str] = []
    for path in sorted((themes_dir or THEMES_DIR).glob("*.toml")):
        try:
            palette = load_palette_file(path)
            theme = theme_from_palette(palette)
        except (UserError, ValueError) as exc:
            app.notify(f"Theme skipped: {exc}", title="Bad theme file", severity="warning")
            continue
        app.register_theme(theme)
        _PALETTES[palette.name] = palette
        names.append(palette.name)
    return names


def palette_for(theme_name: str) -> Palette:
    """The palette of one of our themes; the default theme's for Textual's built-in themes."""
    palette = _PALETTES.get(theme_name)
    if palette is not None:
        return palette
    try:
        palette = load_palette(theme_name)
    except UserError:
        palette = _PALETTES.get(DEFAULT_THEME) or load_palette(DEFAULT_THEME)
        return palette
    _PALETTES[theme_name] = palette
    return palette


def event_style(kind: str, palette: Palette, *, bold: bool = False) -> Style:
    """The Rich style of an event kind (``request``, ``backoff``, ...) in a palette."""
    color = palette.events.get(kind, palette.foreground)
    return Style(color=color, bold=bold or None)


_STYLE_CACHE: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, Style]] = {}


def event_styles(palette: Palette) -> dict[str, Style]:
    """Every event kind's style at once (cached), for views that colour many events per frame.

    Treat the returned dict as read-only: it is shared by every caller.
    """
    key = (palette.name, tuple(palette.events.items()))
    styles = _STYLE_CACHE.get(key)
    if styles is None:
        styles = _STYLE_CACHE[key] = {kind: event_style(kind, palette) for kind in EVENT_KINDS}
    return styles
