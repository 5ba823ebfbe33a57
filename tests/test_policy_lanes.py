"""Policy state beside the timeline's lanes: counted back from the events up to the cursor
(seeking anywhere shows that moment's state), shared state on the server lane, per-client state
on each client's lane, and a legend entry."""

from __future__ import annotations

import asyncio

import numpy as np
from tui_support import FIXTURES, WidgetApp

from sim.analysis.policy_state import Scopes, scopes_of
from sim.settings.config import load_config
from sim.core import events as ev
from tui.view.policy_labels import BREAKER_GLYPHS, REFUSED_GLYPH, PolicyLabels
from tui.state.recorder import record_run_data
from tui.widgets.replay.timeline import Timeline

SPEC = load_config(FIXTURES / "policy_lanes.toml").simulations[0]
SHARED, PER_CLIENT = SPEC.labels


def naive_state(data, cursor: int) -> tuple[dict[int, int], dict[int, int], int | None]:
    """Each client's last token value (−1: refused), each client's breaker state and the last
    token value of any client, by walking the events one by one up to ``cursor``."""
    tokens: dict[int, int] = {}
    breakers: dict[int, int] = {}
    last = None
    states = {ev.BREAKER_OPENS: 1, ev.BREAKER_HALF_OPENS: 2, ev.BREAKER_CLOSES: 0}
    dry = {ev.DENY_REASON_INDEX[r] for r in ("token_bucket", "grpc_throttle", "retry_quota")}
    for i in range(cursor + 1):
        code, c, d = int(data.codes[i]), int(data.clients[i]), int(data.details[i])
        if code == ev.CLIENT_BACKS_OFF and d >= 0:
            tokens[c] = last = d
        elif code == ev.CLIENT_RETRY_DENIED and d in dry:
            tokens[c] = last = -1
        elif code in states:
            breakers[c] = states[code]
    return tokens, breakers, last


def cell(value: int | None, width: int) -> str:
    text = "" if value is None else REFUSED_GLYPH if value == -1 else str(value)
    return text.rjust(width)


def test_the_scopes_come_from_the_strategy_s_policies() -> None:
    assert scopes_of(SPEC.strategy(SHARED).policies) == Scopes(tokens_shared=True, breaker_shared=False)
    assert scopes_of(SPEC.strategy(PER_CLIENT).policies) == Scopes()


def test_the_state_at_any_cursor_is_the_events_up_to_it_forward_backward_or_jumping() -> None:
    for label in (SHARED, PER_CLIENT):
        data = record_run_data(SPEC, label, 6, 0)
        state = PolicyLabels(data.policy_state())
        tokens_shared = data.scopes.tokens_shared
        assert state.present
        rng = np.random.default_rng(0)
        # Playback (every step forward), then seeks back and forth at random.
        cursors = [*range(0, len(data), 7), *rng.integers(0, len(data), 40).tolist(), -1, 0]
        for cursor in cursors:
            state.advance(cursor)
            tokens, breakers, last = naive_state(data, cursor)
            width = state.token_width
            server = state.server_text()
            lanes = state.lane_texts(6, 1)
            if tokens_shared:
                assert server.startswith(cell(last, width))
                assert all(text.startswith(" " * width) for text in lanes)
            else:
                assert server.strip() == ""
                assert [text[:width] for text in lanes] == [cell(tokens.get(c), width) for c in range(6)]
            if state.state.breaker is not None:
                assert [text[width] for text in lanes] == [BREAKER_GLYPHS[breakers.get(c, 0)] for c in range(6)]


def test_a_lane_of_several_clients_shows_its_most_drained_client_and_worst_breaker() -> None:
    data = record_run_data(SPEC, PER_CLIENT, 6, 0)
    state = PolicyLabels(data.policy_state())
    # The last moment a client was refused while another of its lane still had tokens.
    for cursor in range(len(data) - 1, 0, -1):
        state.advance(cursor)
        tokens, _, _ = naive_state(data, cursor)
        pairs = [(tokens.get(2 * i), tokens.get(2 * i + 1)) for i in range(3)]
        if any(-1 in p and any(v is not None and v > 0 for v in p) for p in pairs):
            break
    lanes = state.lane_texts(3, 2)
    for (a, b), text in zip(pairs, lanes):
        known = [v for v in (a, b) if v is not None]
        assert text[:state.token_width] == cell(min(known) if known else None, state.token_width)
    assert any(REFUSED_GLYPH in text for text in lanes)


def test_the_timeline_draws_the_state_beside_the_labels_and_names_it_in_the_legend() -> None:
    data = record_run_data(SPEC, SHARED, 6, 0)
    opened = int(np.flatnonzero(data.codes == ev.BREAKER_OPENS)[0])
    granted = np.flatnonzero((data.codes == ev.CLIENT_BACKS_OFF) & (data.details >= 0))
    cursor = int(granted[granted > opened][0])  # a breaker is open, the throttle just granted
    client = int(data.clients[opened])

    async def body() -> None:
        timeline = Timeline()
        async with WidgetApp(timeline).run_test(size=(100, 10)) as pilot:
            timeline.show(data, cursor)
            await pilot.pause()
            lines = [timeline.render_line(y).text for y in range(timeline.size.height)]
            server = next(line for line in lines if line.startswith("server"))
            label_width = timeline.lane_label_width()
            assert server[:label_width].split() == ["server", str(int(data.details[cursor]))]
            lane = next(line for line in lines if line.startswith(f"c{client} "))
            assert BREAKER_GLYPHS[1] in lane[:label_width] or BREAKER_GLYPHS[2] in lane[:label_width]
            assert "4◉◐ policy state" in " ".join(lines)  # the legend
            # Back to the first event: nothing has happened, no state beside any label.
            timeline.set_cursor(0)
            await pilot.pause()
            lines = [timeline.render_line(y).text for y in range(timeline.size.height)]
            assert all(line[:label_width].split()[1:] == [] for line in lines[1:8])
    asyncio.run(body())
