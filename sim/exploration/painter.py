"""``explore``'s PNGs drawn beside the computation, so that they never delay the CSVs (issue 37).

Matplotlib's import and a map's draw take longer than a fluid map's whole computation (3.0 s
against 2.8 s on the issue's 80-cell map). ``Painter`` forks a child process before the map
is computed: the child imports matplotlib while the parent computes, then renders each map it
is sent to PNG bytes, which the parent writes into its output set. The CSVs are committed
first; the PNGs follow. Where ``fork`` is not available the PNG is rendered in the process,
after the CSVs, with the same bytes.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
from importlib import import_module
from typing import Any

from sim.exploration.runner import ExploreResult
from sim.export.palette import Palette

_PRELOAD = ("matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.collections",
            "sim.exploration.figure")


def render_png(result: ExploreResult, palette: Palette) -> bytes:
    """The bytes of ``<title>_explore.png``, as ``write_explore_png`` writes them."""
    from sim.exploration.figure import explore_figure
    from sim.export.atomic import PNG_COMPRESS_LEVEL

    buffer = io.BytesIO()
    explore_figure(result, palette).savefig(buffer, format="png", pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
    return buffer.getvalue()


IMPORT_NICENESS = 10  # how much lower the child's priority is while it imports


def _niceness() -> int:
    try:
        return os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):  # pragma: no cover - not on this platform
        return 0


def _set_niceness(value: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, value)
    except (AttributeError, OSError):  # raising a priority back needs the privilege to
        pass


def _serve(conn: Any) -> None:
    """The child: import what drawing needs, then render each map of each list of (result,
    palette) sent, until ``None`` or the parent's end (EOF). Ctrl-C is the command's (which
    ends the child); SIGTERM and SIGHUP end it quietly, not by the handlers it inherited."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    # The import yields to the computation beside it (on a busy machine the two shared a core:
    # the CSV came 0.75 s later than without the child); the draw, which the command waits for,
    # gets the parent's priority back where the system allows it.
    priority = _niceness()
    _set_niceness(priority + IMPORT_NICENESS)
    for name in _PRELOAD:
        import_module(name)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        _set_niceness(priority)
        for result, palette in job:
            try:
                conn.send(("ok", render_png(result, palette)))
            except Exception as exc:  # noqa: BLE001 - reported by the parent, which raises it
                conn.send(("error", f"{type(exc).__name__}: {exc}"))


class Painter:
    """Renders maps to PNG bytes in a child process started now (see the module): ``submit``
    the command's results once (one message: the child never waits for a reader while the
    parent writes), ``take`` their bytes in order, ``close`` at the end."""

    def __init__(self) -> None:
        self._conn = None
        self._proc = None
        self._queued: list[tuple[ExploreResult, Palette]] = []
        if "fork" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("fork")
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child,), daemon=True, name="backoff-sim-png")
            try:
                proc.start()
            except OSError:  # no process to spare: draw here
                parent.close()
            else:
                self._conn, self._proc = parent, proc
            child.close()

    def submit(self, results: list[ExploreResult], palette: Palette) -> None:
        """Start drawing ``results`` (in the child; else one at each ``take``)."""
        jobs = [(result, palette) for result in results]
        if self._conn is not None:
            self._conn.send(jobs)
        else:
            self._queued += jobs

    def take(self) -> bytes:
        """The next submitted map's PNG bytes (waiting for the child to finish it)."""
        if self._conn is None:
            return render_png(*self._queued.pop(0))
        try:
            status, payload = self._conn.recv()
        except EOFError:
            raise RuntimeError("the process drawing the explore PNG ended unexpectedly") from None
        if status != "ok":
            raise RuntimeError(f"drawing the explore PNG failed: {payload}")
        return payload

    def close(self) -> None:
        """End the child (at once: it holds nothing of the command's)."""
        if self._proc is None:
            return
        try:
            self._conn.send(None)
        except OSError:
            pass
        self._conn.close()
        self._proc.join(timeout=1.0)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join()
        self._proc = self._conn = None

    def __enter__(self) -> Painter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
