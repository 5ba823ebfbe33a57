"""The timeline's zoom: which stretch of simulated time it shows.

Zooming in halves the stretch around a time (the cursor's), keeping that time where it was on
screen; zooming out doubles it, back to the whole run. While zoomed, the stretch follows the
cursor a page at a time, so playback never runs off the edge. The stretch is in milliseconds,
not a fraction of the run, so switching to a longer or shorter run keeps the same scale.
"""

from __future__ import annotations

from dataclasses import dataclass

ZOOM_FACTOR = 2.0
MAX_ZOOM = 2.0 ** 20  # no stretch shorter than the run / this
LEAD = 0.1  # paging on, the cursor lands this fraction of the stretch from its left edge


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


@dataclass(frozen=True)
class TimeWindow:
    """``span`` ms from ``start``; a ``span`` of None shows the whole run."""

    start: float = 0.0
    span: float | None = None

    @property
    def zoomed(self) -> bool:
        return self.span is not None

    def bounds(self, total: float) -> tuple[float, float] | None:
        """(start, end) within a run lasting ``total`` ms; None when it shows the whole run."""
        if self.span is None or total <= 0 or self.span >= total:
            return None
        start = _clamp(self.start, 0.0, total - self.span)
        return start, start + self.span

    def magnification(self, total: float) -> float:
        bounds = self.bounds(total)
        return 1.0 if bounds is None else total / (bounds[1] - bounds[0])

    def zoomed_by(self, steps: int, around: float, total: float) -> TimeWindow:
        """``steps`` times in (> 0) or out (< 0) around time ``around``; 0: the whole run."""
        if steps == 0 or total <= 0:
            return TimeWindow()
        start, end = self.bounds(total) or (0.0, total)
        span = _clamp((end - start) / ZOOM_FACTOR ** steps, total / MAX_ZOOM, total)
        if span >= total:
            return TimeWindow()
        # ``around`` keeps its place on screen (as a fraction of the width).
        fraction = _clamp((around - start) / (end - start), 0.0, 1.0) if end > start else 0.5
        return TimeWindow(_clamp(around - fraction * span, 0.0, total - span), span)

    def following(self, t: float, total: float) -> TimeWindow:
        """The window moved a page on (or back) if time ``t`` is outside it."""
        bounds = self.bounds(total)
        if bounds is None:
            return self
        start, end = bounds
        if start <= t <= end:
            return self
        span = end - start
        new_start = t - LEAD * span if t > end else t - (1 - LEAD) * span
        return TimeWindow(_clamp(new_start, 0.0, total - span), span)
