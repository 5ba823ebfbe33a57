"""Every key binding of the app in one table: the footer, the help screen and the command
palette all read it, so a new action shows up in all three.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Key:
    """One action: its keys (comma-separated, Textual's syntax), what it does, where it is listed."""

    keys: str
    action: str
    description: str
    group: str
    footer: bool = False
    display: str | None = None
    short: str | None = None  # the footer's label, when the description is too long for it

    @property
    def key_names(self) -> str:
        """The keys as a person types them, for the help screen."""
        names = {"space": "space", "right": "→", "left": "←", "home": "Home", "end": "End",
                 "shift+right": "shift+→", "shift+left": "shift+←", "ctrl+right": "ctrl+→",
                 "ctrl+left": "ctrl+←", "question_mark": "?", "slash": "/",
                 "plus": "+", "minus": "-", "equals_sign": "=", "underscore": "_",
                 "left_square_bracket": "[", "right_square_bracket": "]",
                 "left_curly_bracket": "{", "right_curly_bracket": "}", "f1": "F1",
                 "up": "↑", "down": "↓", "pageup": "PgUp", "pagedown": "PgDn",
                 "enter": "Enter", "escape": "Esc", "ampersand": "&",
                 "greater_than_sign": ">", "less_than_sign": "<", "left_parenthesis": "(",
                 "right_parenthesis": ")"}
        return " ".join(names.get(k, k) for k in self.keys.split(","))


PLAYBACK, SELECTION, VIEW = "Playback", "Switch run", "View and files"

KEYS: tuple[Key, ...] = (
    Key("space", "toggle_play", "Play/pause", PLAYBACK, footer=True, short="Play"),
    Key("right", "step(1)", "Step forward one event", PLAYBACK, footer=True, display="←→",
        short="Step"),
    Key("left", "step(-1)", "Step back one event", PLAYBACK),
    Key("right_square_bracket,shift+right", "step(10)", "Forward 10 events", PLAYBACK),
    Key("left_square_bracket,shift+left", "step(-10)", "Back 10 events", PLAYBACK),
    Key("right_curly_bracket,ctrl+right", "step(100)", "Forward 100 events", PLAYBACK),
    Key("left_curly_bracket,ctrl+left", "step(-100)", "Back 100 events", PLAYBACK),
    Key("home", "jump_start", "Go to the first event", PLAYBACK),
    Key("end", "jump_end", "Go to the last event", PLAYBACK),
    Key("g", "go_to_time", "Go to a time…", PLAYBACK),
    Key("f", "screen.find(1)", "Jump to the next event the log filter matches", PLAYBACK,
        footer=True, display="f/F", short="Find"),
    Key("F", "screen.find(-1)", "Jump to the previous event the log filter matches", PLAYBACK),
    Key("j", "screen.jump_attempt(1)", "Jump to the followed client's next attempt (d follows)",
        PLAYBACK),
    Key("J", "screen.jump_attempt(-1)", "Jump to the followed client's previous attempt",
        PLAYBACK),
    Key("plus,equals_sign", "speed(1)", "Play faster", PLAYBACK),
    Key("minus,underscore", "speed(-1)", "Play slower", PLAYBACK),
    Key("s", "cycle('strategy', 1)", "Next strategy", SELECTION, footer=True, short="Strategy"),
    Key("S", "cycle('strategy', -1)", "Previous strategy", SELECTION),
    Key("c", "cycle('clients', 1)", "More clients", SELECTION, footer=True, short="Clients"),
    Key("C", "cycle('clients', -1)", "Fewer clients", SELECTION),
    Key("r", "cycle('repetition', 1)", "Next repetition", SELECTION),
    Key("R", "cycle('repetition', -1)", "Previous repetition", SELECTION),
    Key("n", "cycle('simulation', 1)", "Next simulation", SELECTION),
    Key("N", "cycle('simulation', -1)", "Previous simulation", SELECTION),
    Key("z", "change_seed", "Change the seed and re-run…", SELECTION),
    Key("w", "screen.run_sweep", "Run the sweep again", SELECTION),
    Key("x", "screen.cancel_sweep", "Cancel the running sweep or tune", SELECTION),
    Key("u", "screen.tune", "Tune: the tuned strategy's best variant joins the table", SELECTION),
    Key("slash", "screen.search_log", "Search the event log (then n/N in the log)", VIEW,
        footer=True, display="/", short="Search"),
    Key("ampersand", "screen.filter_log", "Filter the event log (client ids, event types)", VIEW),
    Key("y", "screen.copy_command", "Copy the command that opens this run at this time", VIEW),
    Key("i", "screen.zoom(1)", "Zoom the timeline in around the cursor", VIEW),
    Key("o", "screen.zoom(-1)", "Zoom the timeline out", VIEW),
    Key("0", "screen.zoom(0)", "Show the whole run on the timeline (reset the zoom)", VIEW),
    Key("L", "screen.pick_clients", "Timeline: pick the clients with lanes (3, 10-19)…", VIEW),
    Key("E", "screen.expand_lane", "Timeline: expand the cursor's lane group to its clients "
        "(again: every client)", VIEW),
    Key("d", "screen.follow_client", "Timeline: follow the cursor's client, its attempts "
        "highlighted (again: stop)", VIEW),
    Key("k", "screen.fold_tiers", "Tiers: unfold or fold every tier's lanes (a click: one tier)",
        VIEW),
    Key("a", "screen.cycle_panes", "Panes: both, analysis alone, timeline and log alone", VIEW),
    Key("m", "screen.cycle_metric", "Next chart: another metric, or time-series panel", VIEW),
    Key("l", "screen.toggle_log", "Chart scale: linear or log", VIEW),
    Key("T", "screen.pick_columns", "Strategy table: pick the columns shown", VIEW),
    Key("O", "screen.sort_table", "Strategy table: sort by the next column (▲▼ in its header)",
        VIEW),
    Key("D", "screen.reverse_sort", "Strategy table: reverse the sort (▲ smallest first, ▼ "
        "largest)", VIEW),
    Key("t", "cycle_theme", "Next colour theme", VIEW),
    Key("e", "screen.export", "Export PNG/CSV files, an HTML report and an SVG screenshot", VIEW,
        footer=True, short="Export"),
    Key("question_mark,f1", "help", "Help: every key", VIEW, footer=True, display="?", short="Help"),
    Key("v", "screen.compare", "Compare strategies side by side", VIEW),
    Key("P", "screen.toggle_phase", "Phase pane: the portrait (work at the server, calls in "
        "backoff) with this run's path to the cursor, in the log's place (again: hide)", VIEW),
    Key("p", "screen.explore", "Explore map: where the simulation recovers, per strategy", VIEW),
    Key("q", "quit", "Quit", VIEW),
)


# The event log's own keys, active while it has the focus (Tab or a click gives it).
LOG = "Event log (Tab)"
LOG_KEYS: tuple[Key, ...] = (
    Key("up", "select(-1)", "Select the event above", LOG, footer=True, display="↑↓",
        short="Select"),
    Key("down", "select(1)", "Select the event below", LOG),
    Key("pageup", "select_page(-1)", "Select a page up", LOG),
    Key("pagedown", "select_page(1)", "Select a page down", LOG),
    Key("home", "select_first", "Select the first event listed", LOG),
    Key("end", "select_last", "Select the last event listed", LOG),
    Key("enter", "choose", "Move the cursor to the selected event", LOG, footer=True,
        short="Go to event"),
    Key("n", "find(1)", "Select the search's next match (Enter moves the cursor there)", LOG),
    Key("N", "find(-1)", "Select the search's previous match", LOG),
    Key("greater_than_sign", "alike('codes', 1)", "Select the next event of the selected type",
        LOG),
    Key("less_than_sign", "alike('codes', -1)", "Select the previous event of that type", LOG),
    Key("right_parenthesis", "alike('clients', 1)", "Select the selected client's next event",
        LOG),
    Key("left_parenthesis", "alike('clients', -1)", "Select that client's previous event", LOG),
    Key("escape", "leave", "Leave the event log", LOG, footer=True, short="Leave log"),
)


# The comparison view's own keys (its playback keys are the ones above, on a shared clock).
COMPARE = "Comparison view (v)"
COMPARE_KEYS: tuple[Key, ...] = (
    Key("1,2,3,4,5,6,7,8,9", "toggle_strategy", "Show or hide the strategy of that row", COMPARE,
        footer=True, display="1-9", short="Show/hide"),
    Key("escape,v,q", "close", "Back to the single run", COMPARE, footer=True, display="Esc",
        short="Back"),
)


# The explore map's own keys (a simulation with [simulation.explore]; p opens it).
EXPLORE = "Explore map (p)"
EXPLORE_KEYS: tuple[Key, ...] = (
    Key("left", "move(-1, 0)", "Cursor to the cell on the left", EXPLORE, footer=True,
        display="←↑↓→", short="Cell"),
    Key("right", "move(1, 0)", "Cursor to the cell on the right", EXPLORE),
    Key("up", "move(0, -1)", "Cursor to the cell above", EXPLORE),
    Key("down", "move(0, 1)", "Cursor to the cell below", EXPLORE),
    Key("s", "strategy(1)", "Next strategy's map", EXPLORE, footer=True, short="Strategy"),
    Key("S", "strategy(-1)", "Previous strategy's map", EXPLORE),
    Key("m", "metric", "Next metric in the cells: recovered runs, goodput, p99…", EXPLORE,
        footer=True, short="Metric"),
    Key("enter", "open_cell", "Open the cell's runs in the normal view", EXPLORE, footer=True,
        short="Open runs"),
    Key("x", "cancel", "Cancel the running map (finished cells are kept)", EXPLORE),
    Key("w", "resume", "Run the cells not computed yet", EXPLORE),
    Key("escape,p,q", "close", "Back to the runs", EXPLORE, footer=True, display="Esc",
        short="Back"),
)


# The app's keys the comparison view and the explore map answer too (bound there as ``app.``
# actions): in the comparison they move every run shown.
COMPARE_APP_ACTIONS = ("cycle('clients', 1)", "cycle('clients', -1)", "cycle('repetition', 1)",
                       "cycle('repetition', -1)", "cycle('simulation', 1)",
                       "cycle('simulation', -1)", "change_seed", "cycle_theme", "help")
EXPLORE_APP_ACTIONS = ("cycle_theme", "help")


@dataclass(frozen=True)
class ViewKeys:
    """The keys one view answers, in the order its help lists them, and what it says first."""

    name: str
    keys: tuple[Key, ...]
    note: str = ""


MAIN_VIEW = ViewKeys("Main view", (*KEYS, *LOG_KEYS),
                     "v (strategies side by side) and p (explore map) open views with keys of "
                     "their own: ? there lists them.")
COMPARE_VIEW = ViewKeys(
    COMPARE,
    (*(k for k in KEYS if k.group == PLAYBACK and not k.action.startswith("screen.")),
     *(k for k in KEYS if k.action in COMPARE_APP_ACTIONS), *COMPARE_KEYS),
    "The playback keys step and play every run on one clock; the run keys move every run. "
    "Esc goes back to the single run at this time.")
EXPLORE_VIEW = ViewKeys(EXPLORE, (*EXPLORE_KEYS, *(k for k in KEYS
                                                   if k.action in EXPLORE_APP_ACTIONS)))


def key_bindings(key: Key) -> list[Binding]:
    """One key's Textual bindings; a numbered action gets one binding per digit, the number as
    its parameter (only the first is shown in the footer, as the range ``display``)."""
    if key.action == "toggle_strategy":
        return [Binding(digit, f"{key.action}({digit})", key.short or key.description,
                        show=key.footer and i == 0, key_display=key.display,
                        tooltip=key.description)
                for i, digit in enumerate(key.keys.split(","))]
    return [Binding(key.keys, key.action, key.short or key.description, show=key.footer,
                    key_display=key.display, tooltip=key.description)]


def bindings(keys: tuple[Key, ...] = KEYS) -> list[Binding]:
    """The table as Textual bindings (footer shows the marked ones; all work)."""
    return [b for k in keys for b in key_bindings(k)]
