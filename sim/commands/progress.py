"""Progress as plain lines on stderr, for when no progress bar can be drawn (stderr is not a
terminal: a CI log, ``2> file``): a line at most every ``PROGRESS_SECONDS``, none at all for work
shorter than that. README promises it for ``run``, ``explore`` and ``tune`` alike; a 10⁴-cell
map used to run 128 s without a word.

Driven by the work's own calls (``update`` as runs finish, ``tick`` while waiting) rather than a
thread of its own: a thread would make the sweep start its workers through a forkserver instead
of forking them. The clock and the interval can be given, so tests need no real waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable

PROGRESS_SECONDS = 5.0


def _clock_text(seconds: int) -> str:
    return f"{seconds // 60}m{seconds % 60:02d}s"


def seconds_left(elapsed: float, share: float | None) -> int | None:
    """The time left at the pace so far: ``elapsed`` seconds did ``share`` of the work; None
    until any share is known, or once it is all done. One formula for the lines and the bar, so
    both say the same, and the estimate moves with the clock between the sweep's reports (at
    each of the bar's refreshes; rich's own column holds its last estimate until the share
    moves, and blanks it after 30 s without a move: a sweep of long runs showed "-:--:--")."""
    if not share or not 0 < share < 1:
        return None
    return int(elapsed * (1 - share) / share)


def _time_left_column():
    """A rich column of ``seconds_left`` for the bar's task (its share: completed / total)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class TimeLeftColumn(ProgressColumn):
        max_refresh = 0.5  # twice a second: the seconds tick down (or up) as they pass

        def render(self, task) -> Text:
            share = task.completed / task.total if task.total else None
            left = seconds_left(task.elapsed or 0.0, share) if not task.finished else 0
            if left is None:
                return Text("-:--:--", style="progress.remaining")
            hours, rest = divmod(left, 3600)
            return Text(f"{hours}:{rest // 60:02d}:{rest % 60:02d}", style="progress.remaining")
    return TimeLeftColumn()


class ProgressLines:
    """``<phase>: <done> of <total> <unit> done[, <events> events simulated], <elapsed>[, about
    <time> left]``: the time left from the share of the phase done (``share``) and the time the
    phase has taken, once any is known."""

    def __init__(self, write: Callable[[str], None], *, events: Callable[[], int] | None = None,
                 phase: str = "simulating", unit: str = "runs", interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 fraction: Callable[[], float | None] | None = None) -> None:
        self._write = write
        self._events = events
        self._fraction = fraction
        self._done = self._total = 0
        self._phase = phase
        self._unit = unit
        self._interval = PROGRESS_SECONDS if interval is None else interval
        self._clock = clock
        self._start = self._last = self._phase_start = clock()

    def update(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        self.tick()

    def phase(self, text: str, unit: str | None = None) -> None:
        if text != self._phase:  # the time left is the new phase's, from its own pace
            self._phase_start = self._clock()
        self._phase = text
        if unit is not None:
            self._unit = unit

    def reporter(self, text: str, unit: str = "runs") -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callback for one phase of the work."""
        def progress(done: int, total: int) -> None:
            self.phase(text, unit)
            self.update(done, total)
        return progress

    def share(self) -> float | None:
        """How much of the work is done, as far as is known: the finer measure given
        (``fraction``: a sweep's events against their estimate), else the units done."""
        shares = [self._done / self._total] if self._total else []
        if self._fraction is not None:
            f = self._fraction()
            if f is not None:
                shares.append(f)
        return max(shares) if shares else None

    def line(self) -> str:
        seconds = self._clock() - self._start
        elapsed = int(seconds)
        events = f", {self._events():,} events simulated" if self._events is not None else ""
        share = self.share()
        left = ""
        remaining = seconds_left(self._clock() - self._phase_start, share)
        if remaining is not None and self._done < self._total:
            left = f", about {_clock_text(remaining)} left"
        return (f"{self._phase}: {self._done:,} of {self._total:,} {self._unit} done{events}, "
                f"{_clock_text(elapsed)}{left}")

    def tick(self) -> None:
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            self._write(self.line())

    def keep_going(self) -> bool:
        """A ``should_stop`` for the backends, which poll it every ~0.1 s while they wait: a
        tick, and never a stop."""
        self.tick()
        return False


SHARE_STEPS = 1000  # a bar counts thousandths of its phase's work


class Display:
    """The commands' one progress display: a bar on a terminal (``rich``, a task per phase,
    its share done by ``fraction`` when given, else by the units done; the units beside it, the
    time elapsed and left), plain ``ProgressLines`` elsewhere, nothing with ``quiet``. Its calls
    are the same either way: ``reporter(text, unit)`` for a phase's ``(done, total)``,
    ``phase(text)`` to rename the current one, ``tick()`` while waiting, ``note(text)`` for a
    line above the bar (never into it)."""

    def __init__(self, err, *, quiet: bool = False, unit: str = "runs",
                 fraction: Callable[[], float | None] | None = None,
                 events: Callable[[], int] | None = None,
                 write: Callable[[str], None] | None = None, interval: float | None = None,
                 get_time: Callable[[], float] | None = None) -> None:
        from sim.commands.stdout import stderr_line

        self._write = write or stderr_line
        self._unit = unit
        self._fraction = fraction
        self.bar = None
        self.lines: ProgressLines | None = None
        self._task = None
        self._counts = (0, 0, unit)
        if quiet:
            return
        if getattr(err, "is_terminal", False):
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                                TimeElapsedColumn(), _time_left_column(), console=err, transient=True,
                                redirect_stdout=False, redirect_stderr=False, get_time=get_time)
        else:
            self.lines = ProgressLines(self._write, events=events, unit=unit, fraction=fraction,
                                       interval=interval)

    def __enter__(self) -> Display:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Take the bar off the screen (and its refresh thread away: a fork is safe after it)."""
        if self.bar is not None:
            self.bar.stop()

    def reporter(self, text: str, unit: str | None = None) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` for a new phase of the work."""
        unit = unit or self._unit
        if self.lines is not None:
            return self.lines.reporter(text, unit)
        if self.bar is None:
            return lambda done, total: None
        task = self.bar.add_task(text, total=SHARE_STEPS, count=f"0/? {unit}")
        self._task, self._counts = task, (0, 0, unit)

        def progress(done: int, total: int) -> None:
            self._task, self._counts = task, (done, total, unit)
            self._show()
        return progress

    def phase(self, text: str, unit: str | None = None) -> None:
        if self.lines is not None:
            self.lines.phase(text, unit)
        elif self.bar is not None and self._task is not None:
            self.bar.update(self._task, description=text)

    def tick(self) -> None:
        if self.lines is not None:
            self.lines.tick()
        elif self.bar is not None and self._task is not None:
            self._show()

    def keep_going(self) -> bool:
        """A ``should_stop`` for the backends (polled while they wait): a tick, never a stop."""
        self.tick()
        return False

    def note(self, text: str) -> None:
        if self.bar is not None and self.bar.live.is_started:
            self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            self._write(text)

    def _show(self) -> None:
        done, total, unit = self._counts
        shares = [done / total] if total else []
        if self._fraction is not None:
            f = self._fraction()
            if f is not None:
                shares.append(f)
        count = f"{done:,}/{total:,} {unit}" if total else f"0/? {unit}"
        self.bar.update(self._task, completed=SHARE_STEPS * max(shares, default=0.0), count=count)
