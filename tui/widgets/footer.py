"""The footer: Textual's, fitted to the terminal's width.

Textual's footer lays its keys out in a row and clips the ones that do not fit under the
command palette's key, docked on the right, so at 80 columns with the event log focused (its
keys come first) a cut key's first letter showed past the palette's key. This one hides whole
keys instead, the last ones first, keeping Help (``?``) to the end, so every key shown reads
whole and there is never a stray character.
"""

from __future__ import annotations

from textual.widgets import Footer

HELP_ACTIONS = frozenset({"help", "app.help"})


class FittedFooter(Footer):
    """A compact footer whose keys all fit on its row; those that do not are hidden."""

    def __init__(self) -> None:
        super().__init__(compact=True)

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """Show the keys that fit in order, dropping the last ones (Help last of all)."""
        keys = [key for key in self.children if not key.has_class("-command-palette")]
        room = self.size.width - sum(_width(key) for key in self.children
                                     if key.has_class("-command-palette"))
        shown = list(keys)
        while shown and sum(map(_width, shown)) > room:
            others = [key for key in shown if getattr(key, "action", "") not in HELP_ACTIONS]
            shown.remove(others[-1] if others else shown[-1])
        for key in keys:
            key.display = key in shown


def _width(key) -> int:
    """The cells a footer key takes: its label, padding, border and margin."""
    return key.render().cell_len + key.styles.gutter.width + key.styles.margin.width
