"""The help screen: the keys of the view it was opened from, grouped, from the same table the
footer and palette use (``tui.keys``: a view lists the keys it answers, so none is dead).
Typing narrows the list to the keys and parts whose words contain what was typed."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..keys import COMPARE, COMPARE_KEYS, EXPLORE, EXPLORE_KEYS, KEYS, LOG_KEYS, MAIN_VIEW, Key, ViewKeys
from ..view.latency_rows import star_rule  # the caption's rule (sim.analysis.best), in words
from ..view.log_filter import __doc__ as FILTER_HELP

# What each part of the screen shows, and what its marks mean.
READING: tuple[tuple[str, str], ...] = (
    ("Timeline", "A lane per client, time left to right, ▼ over the cursor. ● write, ○ "
                 "version read, + accept, ✓ commit (or success), ✗ reject, abort or timeout, "
                 "⊘ give up, ◆ ◇ the server's steps, ·── a backoff and its wait. With more "
                 "clients than rows a lane holds a range (c10-19, every lane as many) and a "
                 "cell shows its most telling event; lanes of 5 clients or more show bars "
                 "▂▄▆█ by events per cell instead (the legend gives the counts), coloured by "
                 "that event. ░ on the server lane: the server is paused (an outage). With "
                 "retry policies: ◉ a breaker's change, ⊖ a retry denied or a call refused; "
                 "beside each label the policy state at the cursor: a budget's tokens after "
                 "its last granted retry (⊖: it refused one since), ◉ a breaker open, ◐ "
                 "half-open; state shared by all clients beside the server lane (a lane of "
                 "several clients: the most drained, the worst breaker). L picks the clients "
                 "with lanes, E expands the cursor's lane group, d follows the cursor's client "
                 "(▸ on its lane, its attempts highlighted; j/J: its next/previous attempt)."),
    ("Event log", "Every event of the run, times in the simulation's time unit "
                  "(time_unit in the config, ms unless it says otherwise); ▷ the current "
                  "event, those ahead of the cursor greyed. Client — is the whole server (an "
                  "outage's start and end). / searches the rows' names and details: Enter "
                  "selects the first match from the cursor and focuses the log, where n/N, "
                  ">/< (same type) and )/( (same client) move the selection as less moves "
                  "its page, not the cursor: Enter takes the cursor there. & filters."),
    ("Strategy table", "For a burst of writes: mean ± 95% CI over the runs at the selected "
                       "client count. ★ lowest mean cost; the others: cost difference from it "
                       "± 95% CI (percentage); ≈: not significantly worse (paired runs share "
                       "their random numbers); n/a: one run, no CI. Success: the share of calls that "
                       "succeeded in the end. T picks the columns, O sorts by the next column "
                       "(▲ smallest first), D reverses (▼)."),
    ("Pool line", "For a PoolServer, under the timeline: at the cursor, the workers busy of "
                  "how many (fewer in a capacity incident, ┈), the queue's length and the "
                  "requests dropped so far by reason (queue_timeout, codel, cancelled, "
                  "limiter). A replay does not know the pool's size."),
    ("Latency table", "For servers that reply: counts are means per run; p50…max and mean are "
                      "latencies from a request's first attempt to its success, pooled "
                      "over the runs; unfinished: clients still waiting at the end. "
                      f"{star_rule(None)}. Recovery: runs whose goodput came back to 85% of "
                      "its pre-outage level, above 80% beyond noise, and median latency to within "
                      "2x, to the end, and their median time; ✗ never: none did, short of 90% "
                      "beyond noise; —: too noisy to tell 80% from 90% (the caption says why)."),
    ("Time series", "For servers that reply, the current run per bucket: requests, the "
                    "server's load, failures (timed out, rejected or error reply, dropped by "
                    "the server, refused by a limit: as the PNG names them). ░ marks an "
                    "outage, the │ line the cursor; m "
                    "shows the next panel when not all fit."),
    ("Comparison", "v: the strategies' runs at the current clients and repetition on one time "
                   "axis and one clock (they share their random numbers, so the lanes differ "
                   "only by what each strategy did), each titled with its totals."),
    ("Explore map", "p, for a simulation with [simulation.explore]: a cell grid per strategy "
                    "(columns the first axis, rows the second, larger values up), each cell the "
                    "runs that recovered (✓ at least 90%, ◐ some, ✗ at most 10%, · running) or, "
                    "with m, a metric's mean; Enter shows that cell's runs here."),
    ("Narrow panes", "Tables leave out columns (the caption says how many): a gives the "
                     "analysis the whole width, T picks the columns."),
)


def matches(needle: str, *texts: str) -> bool:
    """True when ``needle`` (any case; "" always) is in one of ``texts``."""
    needle = needle.strip().lower()
    return not needle or any(needle in text.lower() for text in texts)


def reading_table(needle: str = "") -> Table | None:
    """The parts of the screen whose name or text contain ``needle``; None when none does."""
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), expand=False)
    table.add_column("part", style="bold", no_wrap=True)
    table.add_column("what it shows")
    for part, text in READING:
        if matches(needle, part, text):
            table.add_row(part, text)
    return table if table.row_count else None


COMPARE_NOTE = ("the playback keys step and play every run on one clock; c/C, r/R, n/N, z "
                "and t move every run")
EXPLORE_NOTE = ("a simulation with [simulation.explore]: a grid per strategy, ✓ ◐ ✗ by the "
                "runs recovered; t, ? too")
GROUP_NOTES = {COMPARE: COMPARE_NOTE, EXPLORE: EXPLORE_NOTE}
EXTRA_KEYS = (("ctrl+p", "Command palette: every action, and the theme picker"),
              ("ctrl+q", "Quit"))


def key_groups(keys: tuple[Key, ...] = (*KEYS, *LOG_KEYS, *COMPARE_KEYS, *EXPLORE_KEYS),
               notes: bool = True) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """``keys`` (every key of every view: README's table, ``docs/readme_tables.py``) by group
    in order, as (group, its note, [(keys, action)]), then the keys that work anywhere."""
    groups: list[tuple[str, str, list[tuple[str, str]]]] = []
    for key in keys:
        if not groups or groups[-1][0] != key.group:
            groups.append((key.group, GROUP_NOTES.get(key.group, "") if notes else "", []))
        groups[-1][2].append((key.key_names, key.description))
    groups.append(("Anywhere", "", list(EXTRA_KEYS)))
    return groups


def keys_table(view: ViewKeys = MAIN_VIEW, needle: str = "") -> Table | None:
    """One view's keys by group, those whose keys or words contain ``needle`` (all of a group
    whose name does); None when none does."""
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), expand=False)
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("action")
    for group, note, keys in key_groups(view.keys, notes=False):
        shown = [(names, what) for names, what in keys
                 if matches(needle, group, what) or needle.strip() in names.split()]
        if not shown:
            continue
        if table.row_count:
            table.add_row("", "")
        table.add_row(f"[u]{group}[/u]", note)
        for names, what in shown:
            table.add_row(names, what)
    return table if table.row_count else None


class HelpSearch(Input):
    """The help's search box; while it is empty, ? and q still close the help."""

    CLOSERS = ("q", "question_mark")

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return super().check_consume_key(key, character) and not self._closes(key)

    def on_key(self, event: events.Key) -> None:
        if self._closes(event.key):
            event.prevent_default()  # not typed: the key reaches the screen's binding

    def _closes(self, key: str) -> bool:
        return not self.value and key in self.CLOSERS


class HelpScreen(ModalScreen[None]):
    """Lists one view's bindings; any of Escape, q, ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close help"),
                Binding("up", "scroll('scroll_up')", show=False),
                Binding("down", "scroll('scroll_down')", show=False),
                Binding("pageup", "scroll('scroll_page_up')", show=False),
                Binding("pagedown", "scroll('scroll_page_down')", show=False)]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 76;
            max-width: 95%;
            height: auto;
            max-height: 90%;
            padding: 0 2;
            border: round $primary;
            background: $surface;
        }
    }
    """

    def __init__(self, view: ViewKeys = MAIN_VIEW) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = f"Keys · {self.view.name}"
        scroll.border_subtitle = "type to search · Esc closes"
        with scroll:
            yield HelpSearch(placeholder="search the keys (e.g. log, zoom, copy)…",
                             id="help-search", compact=True)
            if self.view.note:
                yield Static(self.view.note + "\n", id="help-note", markup=False)
            yield Static(keys_table(self.view), id="help-keys")
            if any(k.action == "screen.filter_log" for k in self.view.keys):  # a log here
                yield Static("[u]Event log filter (&)[/u]\n" + _filter_syntax(), id="help-filter")
            yield Static("\n[u]What the screen shows[/u]", id="help-reading-title")
            yield Static(reading_table(), id="help-reading")

    def on_mount(self) -> None:
        self.query_one(HelpSearch).focus()  # typing searches; ↑/↓/PgUp/PgDn scroll the list

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one(VerticalScroll), how)(animate=False)

    @on(Input.Changed, "#help-search")
    def _search(self, event: Input.Changed) -> None:
        """Only the keys and parts that contain what is typed; the rest hidden."""
        needle = event.value
        self.query_one(VerticalScroll).scroll_home(animate=False)  # the box and the first rows
        keys = keys_table(self.view, needle)
        self.query_one("#help-keys", Static).update(
            keys if keys is not None else Text(f"No key of this view matches {needle.strip()!r}."))
        reading = reading_table(needle)
        self.query_one("#help-reading", Static).update(reading if reading is not None else "")
        self.query_one("#help-reading-title").display = reading is not None
        for note in self.query("#help-note"):
            note.display = not needle.strip()
        for syntax in self.query("#help-filter"):
            syntax.display = matches(needle, "event log filter", _filter_syntax())

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


def _filter_syntax() -> str:
    lines = (FILTER_HELP or "").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Syntax")), 0)
    return "\n".join(lines[start + 1:]).strip().replace("``", "")
