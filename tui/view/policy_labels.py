"""A run's retry-policy state as the text the timeline writes beside each lane's label.

The state itself is ``sim.analysis.policy_state``'s, read at the timeline's cursor: shared state
goes on the server lane, per-client state on each client's lane (a lane of several clients shows
the most drained of them and the worst breaker). Here it becomes text: the tokens left,
right-aligned, ``⊖`` for a refusal, a breaker's glyph. Nothing here imports Textual.
"""

from __future__ import annotations

from sim.analysis.policy_state import CLOSED, HALF_OPEN, OPEN, REFUSED, PolicyState

BREAKER_GLYPHS = {CLOSED: " ", OPEN: "◉", HALF_OPEN: "◐"}
REFUSED_GLYPH = "⊖"


class PolicyLabels:
    """The policy state of one run at a cursor, as lane-label text (each view keeps its own)."""

    def __init__(self, state: PolicyState) -> None:
        self.state = state
        # Cells the state takes beside a label: the widest token count, a breaker glyph, a space.
        self.token_width = len(f"{state.max_tokens}") if state.tokens is not None else 0
        self.width = (self.token_width + (1 if state.breaker is not None else 0)
                      + (1 if state.present else 0))

    @property
    def present(self) -> bool:
        return self.width > 0

    def advance(self, cursor: int) -> None:
        self.state.advance(cursor)

    def _text(self, tokens: int | None, breaker: int | None) -> str:
        """``4◉ ``: the tokens (right-aligned), the breaker's glyph, a space before the lane."""
        text = ""
        if self.state.tokens is not None:
            cell = "" if tokens is None else REFUSED_GLYPH if tokens == REFUSED else f"{tokens}"
            text += cell.rjust(self.token_width)
        if self.state.breaker is not None:
            text += BREAKER_GLYPHS[CLOSED if breaker is None else breaker]
        return text + " "

    def server_text(self) -> str:
        """The shared state at the cursor (blanks when no state is shared)."""
        return self._text(*self.state.shared())

    def lane_texts(self, lanes: int, per_lane: int) -> list[str]:
        """Each lane's per-client state at the cursor."""
        tokens, breakers = self.state.groups(lanes, per_lane)
        return [self._text(t, b) for t, b in zip(tokens, breakers)]
