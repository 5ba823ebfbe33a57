"""A matplotlib figure as inline SVG for the HTML report, its strategies' parts tagged.

The figures are the PNGs' own (``plots``, ``overload_plots``, ``tier_plots``, the map's and the
portrait's figure functions), saved with matplotlib's SVG backend: text stays text (searchable,
small), no date, and a fixed hash salt per chart so the same results give the same file. Each
part that belongs to one strategy (a panel titled with its label, a line labelled with it, the
CI band in its colour) gets the id ``<key>-<strategy index>-c<chart>n<n>``: the page's script
hides and shows every id starting ``<key>-<strategy index>-`` when the strategy is toggled.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)  # the XML declaration, DOCTYPE and comments


def _owner(title: str, labels: Sequence[str]) -> int | None:
    """The strategy a panel belongs to: the longest label its title holds (a panel's title says
    its strategy: ``no retries: 1,200 requests...``, ``Map: backoff (returns within...)``)."""
    held = [(len(label), s) for s, label in enumerate(labels) if label and label in title]
    return max(held)[1] if held else None


def _title(ax: Axes) -> str:
    return " ".join(ax.get_title(loc=loc) for loc in ("left", "center", "right"))


def tag_strategies(fig: Figure, labels: Sequence[str], key: str, chart: int = 0) -> int:
    """Give each strategy's parts of ``fig`` an id (see the module docstring); return how many
    parts were tagged."""
    from matplotlib.colors import same_color

    tags = 0

    def tag(artist, s: int) -> None:
        nonlocal tags
        artist.set_gid(f"{key}-{s}-c{chart}n{tags}")
        tags += 1

    owners: dict[tuple[float, ...], int] = {}  # a panel's place → its strategy (for its twin)
    panels = []
    for ax in fig.axes:
        s = _owner(_title(ax), labels)
        place = tuple(round(v, 4) for v in ax.get_position().bounds)
        if s is not None:
            owners[place] = s
        panels.append((ax, s, place))
    for ax, s, place in panels:
        s = s if s is not None else owners.get(place)
        if s is not None:
            tag(ax, s)
            continue
        colours: list[tuple[object, int]] = []
        for line in ax.get_lines():
            if line.get_label() in labels:
                i = list(labels).index(line.get_label())
                tag(line, i)
                colours.append((line.get_color(), i))
        for collection in ax.collections:  # a line's CI band: filled in the line's colour
            faces = collection.get_facecolor()
            if len(faces) != 1:
                continue
            for colour, i in colours:
                if same_color(faces[0][:3], colour):
                    tag(collection, i)
                    break
    return tags


def figure_svg(fig: Figure, labels: Sequence[str], key: str, chart: int) -> str:
    """``fig`` as an ``<svg>`` element to inline in the page, its strategies' parts tagged
    (``key`` names the page's section, ``chart`` the chart in it: the ids are unique in the
    page), the same text for the same figure."""
    import matplotlib

    tag_strategies(fig, labels, key, chart)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"{key}-c{chart}"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _PROLOG.sub("", buffer.getvalue(), count=1)
