"""The fluid model: the flows of clients, attempts and work, integrated step by step for a batch
of cases at once (numpy only, one vector operation per flow and step for the whole batch).

Mean field, not queueing formulas: mass (expected numbers of clients or requests) moves between
the states a client of the simulation goes through, with the simulation's own timing rules:

- **thinking** ``Z``: a closed (``poisson``) client thinks an exponential time of mean ``T``
  between calls, so over a step ``h`` a share ``1 − e^(−h/T)`` of the thinkers starts a call
  (``open``: ``N·h/T`` calls a step, whatever happens to them);
- **attempts in flight**: each step's attempts form a bin (sent at the step's midpoint, level =
  how many failures their call has had, kept as a mix per bin). The server takes bins first in,
  first out (held ones at the resume of an outage, in order), so its state is one number, the
  cumulative work completed ``D``, against the cumulative work admitted ``A(i)`` up to bin
  ``i``: bin ``i`` is done when ``D ≥ A(i + 1)``. The work at the server (queued + in service)
  is ``A(now) − D``.
- **timeouts**: a bin's deadline is its send time + ``timeout`` (− a network leg for the reply);
  its work not completed by then times out: the clients back off (the orbit), give up (the
  strategy's limits, a budget's refusal: back to thinking), or succeed if completed in time.
  Abandoned work stays at the server (it is not cancelled), as in the simulation.
- **the orbit**: a failure at level ``k`` retries after a delay drawn from the strategy's k-th
  delay distribution (``sim.fluid.delays``): its mass is added to the bins of those future
  steps, at level ``k + 1``.

Servers: ``LatencyServer`` (``"current"``): at each check (the step is the check interval) every
request older than ``L(c)`` completes, ``c`` the work at the server and
``L(c) = base·e^(growth·(c − limit))`` above the limit: oldest first, so the front moves to the
first bin admitted after ``now − L(c)``, exactly the server's sweep. Slot servers (QueueServer,
PoolServer): ``m`` slots each completing work at ``1/S`` (``S`` the mean service time), so the
front moves by ``min(work, m)·h/S`` a step, times ``threshold/outstanding`` when a QueueServer is
overwhelmed; arrivals beyond ``m + queue_size`` are rejected (heard after ``reject_delay``).

What it cannot see: randomness (a run's luck near the boundary: the fluid is the mean's path,
which is why it is judged against the simulation's majority verdict), correlations between a
client's attempts beyond the level, and the spread of service times (only their mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.fluid.delays import PackedTables
from sim.fluid.express import FluidCase

_MAX_EXPONENT = 700.0
NEGLIGIBLE = 1e-9  # failing mass (clients) below which a case's retries are not scheduled  # as LatencyServer: e^700 ~ 1e304, latencies saturate


@dataclass
class Series:
    """Per case (rows) and step (columns): successes of first attempts and of retries and their
    latencies (a call's: from its start, as the simulation measures it); and per-case totals."""

    step: float
    first: np.ndarray  # successes of first attempts
    first_latency: np.ndarray
    retried: np.ndarray  # successes of later attempts
    retried_latency: np.ndarray
    totals: dict[str, np.ndarray]

    @property
    def successes(self) -> np.ndarray:
        return self.first + self.retried


def _per_step(cases: list[FluidCase], steps: int, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Capacity and slowdown factors per case and step (incidents), and the think-time factor
    (a surge shortens think times)."""
    b = len(cases)
    mid = (np.arange(steps + 1) + 0.5) * step
    capacity, slowdown, surge = np.ones((b, steps + 1)), np.ones((b, steps + 1)), np.ones((b, steps + 1))
    for i, case in enumerate(cases):
        for inc in case.degradations:
            inside = (mid >= inc.start) & (mid < inc.end)
            if inc.kind == "capacity":
                capacity[i, inside] = inc.level
            elif inc.kind == "slowdown":
                slowdown[i, inside] = inc.level
        if case.surge is not None:
            start, end, factor = case.surge
            surge[i, (mid >= start) & (mid < end)] = factor
    return capacity, slowdown, surge


class _Outages:
    """Each case's stops as held bins ``[hs, he)`` (sent while the server is stopped: midpoint
    in ``[start, end)``), resumed at the start of step ``he``."""

    def __init__(self, cases: list[FluidCase], h: float, steps: int) -> None:
        b = len(cases)
        self.count = max((len(c.stops) for c in cases), default=0)
        width = max(self.count, 1)
        self.hs = np.full((b, width), steps + 1, dtype=np.int64)
        self.he = self.hs.copy()
        self.end = np.full((b, width), np.inf)
        self.stopped = np.zeros((b, steps + 1), dtype=bool)
        self.resumes: dict[int, list[tuple[int, int]]] = {}
        for i, c in enumerate(cases):
            for j, o in enumerate(c.stops):
                lo = max(0, math.ceil(o.start / h - 0.5))
                hi = max(lo, math.ceil(o.end / h - 0.5))
                self.hs[i, j], self.he[i, j], self.end[i, j] = lo, hi, o.end
                self.stopped[i, lo:hi] = True
                if lo < hi <= steps:
                    self.resumes.setdefault(hi, []).append((i, j))


def _rows(per_step: np.ndarray) -> np.ndarray:
    """``per_step[case, step]`` as one contiguous row a step; a value that never changes over
    the steps (no incident, no surge, no stop) as one row seen at every step, not a copy each."""
    if (per_step == per_step[:, :1]).all():
        return np.broadcast_to(np.ascontiguousarray(per_step[:, 0]), per_step.shape[::-1])
    return np.ascontiguousarray(per_step.T)


class Batch:
    """The state of a batch of cases, and one step of its flows (see the module): the numpy
    loop, the reference the compiled one (``sim.fluid.compiled``) transcribes."""

    def __init__(self, cases: list[FluidCase], table: PackedTables) -> None:
        first = cases[0]
        self.cases, self.table = cases, table
        self.h, self.steps, self.kind = first.step, first.steps, first.kind
        h, steps, b = self.h, self.steps, len(cases)
        self.b, self.rows = b, np.arange(b)
        self.levels = table.levels

        def f(name: str) -> np.ndarray:
            return np.array([getattr(c, name) for c in cases], dtype=np.float64)

        self.clients, self.think, self.timeout, self.net = f("clients"), f("think_time"), f("timeout"), f("network")
        self.closed = np.array([c.closed for c in cases])
        self.capacity, self.slowdown, self.surge = _per_step(cases, steps, h)
        self.out = _Outages(cases, h, steps)
        # Bin i is live at the end of step n while (i + 0.5)·h + timeout − net > (n + 1)·h.
        self.reach = (self.timeout - self.net) / h
        # the first live bin at the end of step n: floor(n + 1 − reach − 0.5) + 1 = live_base + n + 1
        self.live_base = np.floor(-self.reach - 0.5).astype(np.int64) + 1
        if self.kind == "slots":
            self.slots, self.service, self.queue = f("slots"), f("service_time"), f("queue_size")
            self.threshold = f("overload_threshold")
            # a rejection is heard reject_delay (stretched by any slowdown) + a network leg later
            self.reject_off = np.rint((f("reject_delay") * self.slowdown.max(axis=1) + self.net) / h).astype(np.int64)
        else:
            self.base, self.limit, self.growth = f("base_latency"), f("limit"), f("growth")
            self.reject_off = np.zeros(b, dtype=np.int64)
        extra = int(self.reject_off.max())
        self.sent = np.zeros((b, steps + 1))
        self.rejected = np.zeros((b, steps + 1))
        self.ring = int(math.ceil(self.reach.max())) + 3
        self.mix = np.zeros((b, self.ring, self.levels))  # level mix of bins within their deadline
        self.admitted = np.zeros((b, steps + 2))  # A(i): work admitted in bins before i
        self.adm_flat = self.admitted.reshape(-1)
        self.done = np.zeros(b)  # D: work completed
        self.front = np.zeros(b, dtype=np.int64)  # first bin not entirely completed
        self.thinking = np.where(self.closed, self.clients, 0.0)
        self.closed_f = self.closed.astype(np.float64)
        self.calls = np.zeros((b, steps + 1))  # per bin: its first attempts (new calls)
        self.aged = np.zeros((b, steps + 1))  # per bin: Σ mass × the call's mean age at the attempt
        # new calls per step: a share of the thinkers (closed), or N·h/T whatever happens (open)
        self.call_share = np.where(self.closed[:, None], -np.expm1(-h * self.surge / self.think[:, None]), 0.0)
        self.open_calls = np.where(self.closed, 0.0, self.clients * h / self.think)
        self.success = np.zeros((b, steps))
        self.middle = np.zeros((b, steps), dtype=np.int64)
        self.row_base = self.rows * (steps + 2)  # admitted, flat: case · (steps + 2) + bin
        self.sent_base = self.rows * (steps + 1)
        budgets = [c.budget for c in cases]
        self.has_budget = np.array([bd is not None for bd in budgets])
        self.reserve = np.array([bd.reserve if bd else 0.0 for bd in budgets])
        self.share = np.array([bd.fraction if bd else 0.0 for bd in budgets])
        self.window = np.array([bd.window if bd else 1 for bd in budgets], dtype=np.int64)
        self.on_success = np.array([bool(bd and bd.on_success) for bd in budgets])
        self.success_f = self.on_success.astype(np.float64)
        self.any_budget = bool(self.has_budget.any())
        # per step, from column ``pad`` on (the columns before are the zeros a window reaches
        # back to before the run began), flat: case · width + pad + step
        self.pad = int(self.window.max())
        width = steps + 1 + self.pad
        self.deposit_step = np.zeros(b * width)
        self.withdraw_step = np.zeros(b * width)
        self.budget_now = self.rows * width + self.pad  # + n: this step's column
        self.budget_old = self.budget_now - self.window  # + n: the column leaving the window
        self.win_deposit, self.win_withdraw = np.zeros(b), np.zeros(b)
        # The orbit: retries due per step and level, one ring buffer per distinct table (as
        # long as its longest backoff, as deep as its levels), flat:
        # ((case · ring) + step mod ring) · levels + level. A point's mass goes to the next level
        # of its table (whose last level repeats); two passes, so no (step, level) is written
        # twice in one operation.
        self.points = []
        for rows, t in table.shared:
            offsets = np.concatenate(t.offsets)
            source = np.concatenate([np.full(o.size, k) for k, o in enumerate(t.offsets)])
            weights = np.concatenate(t.weights)
            top, ring = t.levels - 1, int(offsets.max()) + extra + 2
            orbit = np.zeros(rows.size * ring * t.levels)
            local = np.arange(rows.size)
            passes = []
            for m in (source < top, source == top):
                if m.any():
                    passes.append((source[m], weights[m], offsets[m], np.minimum(source[m] + 1, top)))
            # a case's slot in its orbit: (local · ring + step mod ring) · levels + level
            base_slot = (local * ring * t.levels)[:, None]
            view = orbit.reshape(rows.size, ring, t.levels)
            self.points.append((rows, local, ring, t.levels, orbit, passes, base_slot, view))
        # One table for every case (rows in order, as deep as the batch): its ring row is the bin.
        only = self.points[0] if len(self.points) == 1 else None
        self.single = only[7] if only is not None and only[3] == self.levels and only[0].size == b else None
        self.all_closed = bool(self.closed.all())
        self.held_from = [int(v) for v in self.out.hs.min(axis=0)] if self.out.count else []
        # live_base <= 0 for every case (a deadline of at least half a step): from step
        # valid_from on, the first live bin is live_base + n + 1 and the bin due is the one before
        self.live_simple = bool((self.live_base <= 0).all())
        self.valid_from = int((-self.live_base).max())
        self.sent_flat, self.rejected_flat = self.sent.reshape(-1), self.rejected.reshape(-1)
        # per step: filled by ``series_of`` (or the compiled loop, ``sim.fluid.compiled``);
        # nothing is allocated for them before
        none = np.empty((b, 0))
        self.series = Series(h, none, none, none, none,
                             {k: np.zeros(b) for k in ("work", "offered", "successes", "timeouts",
                                                       "rejections", "gave_up", "retries_denied")})

    def _step_rows(self) -> None:
        """What the numpy step loop reads per step, one contiguous row a step, and what it may
        skip (every case running, no bin held yet, every deadline bin live, no slowdown): the
        same numbers with fewer operations a step. Made for that loop only: the compiled one
        reads the per-case arrays (each per-step array of the 160-case map's batch is 7.7 MB,
        whose first writes cost about as much as the arithmetic on it)."""
        self.run_t = _rows(~self.out.stopped)
        self.all_run = self.run_t.all(axis=1).tolist()
        self.share_t = _rows(self.call_share)
        self.capacity_t = _rows(self.capacity)
        self.slowdown_t = _rows(self.slowdown)
        self.no_slowdown = bool((self.slowdown == 1.0).all())
        if self.kind == "latency":
            self.limit_cap_t = _rows(self.limit[:, None] * self.capacity)
        else:
            self.slots_cap_t = _rows(self.slots[:, None] * self.capacity)

    # --- failures: give up, or back off into the orbit ------------------------------------
    def fail(self, n: int, mass: np.ndarray, extra: np.ndarray | None) -> None:
        """Failures ``mass[case, level]`` heard at step ``n`` (+ ``extra`` steps for
        rejections): the strategy's limits give up a share, a budget may refuse retries (both
        go back to thinking), the rest backs off into the orbit."""
        totals, table = self.series.totals, self.table
        quit_ = (mass * table.give_up).sum(axis=1)
        every = mass.sum(axis=1)
        if self.any_budget:
            wanted = every - quit_
            balance = self.reserve + self.share * self.win_deposit - self.win_withdraw
            allowed = np.where(self.has_budget, np.minimum(np.maximum(balance, 0.0), wanted), wanted)
            taken = np.where(self.has_budget, allowed, 0.0)
            self.withdraw_step[self.budget_now + n] += taken
            self.win_withdraw += taken
            ratio = np.where(wanted > 0, allowed / np.where(wanted > 0, wanted, 1.0), 1.0)
            refused = wanted - allowed
            self.thinking += (quit_ + refused) * self.closed_f
            totals["gave_up"] += quit_ + refused
            totals["retries_denied"] += refused
            scaled = mass * ratio[:, None]
            total = scaled.sum(axis=1)
        else:  # nothing refused: the ratio is 1, the mass retries or gives up as it is
            self.thinking += quit_ if self.all_closed else quit_ * self.closed_f
            totals["gave_up"] += quit_
            scaled, total = mass, every
        failing = total > NEGLIGIBLE
        if not failing.all():  # a trace of a client: back to thinking, not carried at every step
            self.thinking += total * ~failing * self.closed_f
            if not failing.any():
                return
        for rows, local, ring, levels, orbit, passes, base_slot, _ in self.points:
            pick = failing[rows]  # only the cases that fail now (a map's healthy cells do not)
            if not pick.any():
                continue
            if pick.all():
                chosen, where = rows, base_slot
            else:
                chosen, where = rows[pick], base_slot[pick]
            part = scaled[chosen]
            for source, weights, offsets, level in passes:
                if extra is None:  # a timeout: the same step for every case
                    slot = where + ((n + 1 + offsets) % ring * levels + level)
                else:
                    slot = where + ((extra[chosen][:, None] + (n + 1) + offsets) % ring * levels + level)
                orbit[slot] += part[:, source] * weights

    def resume(self, n: int) -> None:
        """Outages ending now: held bins still waited for are admitted (the rest dropped, or
        served with ``abandoned = "serve"``); a slot server's queue takes what fits, in order."""
        out, h = self.out, self.h
        for i, j in self.out.resumes[n]:
            lo, hi = int(out.hs[i, j]), int(out.he[i, j])
            live = (np.arange(lo, hi) + 0.5) * h + self.timeout[i] > out.end[i, j]
            held = self.sent[i, lo:hi]
            awaited = held if self.cases[i].abandoned == "serve" else np.where(live, held, 0.0)
            if self.kind == "slots":
                room = max(0.0, self.slots[i] * self.capacity[i, n] + self.queue[i]
                           - (self.admitted[i, lo] - self.done[i]))
                took = np.diff(np.concatenate([[0.0], np.minimum(np.cumsum(awaited), room)]))
                refused = np.where(live, awaited - took, 0.0)
                if refused.any():
                    self.rejected[i, lo:hi] += refused
                    self.series.totals["rejections"][i] += refused.sum()
                    mass = np.zeros((self.b, self.levels))
                    mass[i] = (refused[:, None] * self.mix[i, np.arange(lo, hi) % self.ring]).sum(axis=0)
                    self.fail(n, mass, self.reject_off)
                awaited = took
            self.admitted[i, lo + 1:hi + 1] = self.admitted[i, lo] + np.cumsum(awaited)

    def send(self, n: int) -> np.ndarray:
        """New calls and the retries due now form bin ``n``; returns its mass."""
        calls = self.thinking * self.share_t[n] + self.open_calls
        self.thinking -= calls if self.all_closed else calls * self.closed_f
        if self.single is not None:
            at = n % self.points[0][2]
            due = self.single[:, at, :].copy()
            self.single[:, at, :] = 0.0  # the slot is reused ring steps on
        else:
            due = np.zeros((self.b, self.levels))
            for rows, _, ring, levels, _, _, _, view in self.points:
                due[rows, :levels] = view[:, n % ring, :]
                view[:, n % ring, :] = 0.0
        due[:, 0] += calls
        total = due.sum(axis=1)
        r = n % self.ring
        self.mix[:, r, :] = due / np.where(total > 0, total, 1.0)[:, None]
        self.calls[:, n] = calls
        self.aged[:, n] = (due * self.table.elapsed).sum(axis=1)  # level 0's age is 0
        self.sent[:, n] = total
        if self.any_budget:  # the window's deposits and withdrawals: this step in, one out
            self.win_deposit -= self.deposit_step[self.budget_old + n]
            self.win_withdraw -= self.withdraw_step[self.budget_old + n]
            dep = calls * (1.0 - self.success_f)
            self.deposit_step[self.budget_now + n] += dep
            self.win_deposit += dep
        return total

    def admit(self, n: int, total: np.ndarray, run: np.ndarray, everyone: bool) -> None:
        """Bin ``n`` enters the server (held while it is stopped); a full slot server rejects.
        ``everyone``: no case is stopped at ``n``."""
        if self.kind == "slots":
            room = np.maximum(0.0, self.slots_cap_t[n] + self.queue - (self.admitted[:, n] - self.done))
            if everyone:
                take = np.minimum(total, room)
                refused = total - take
            else:
                take = np.where(run, np.minimum(total, room), 0.0)
                refused = np.where(run, total - take, 0.0)
            if refused.any():
                self.rejected[:, n] = refused
                self.series.totals["rejections"] += refused
                self.fail(n, refused[:, None] * self.mix[:, n % self.ring, :], self.reject_off)
        else:
            take = total if everyone else np.where(run, total, 0.0)
        self.admitted[:, n + 1] = self.admitted[:, n] + take

    def complete_latency(self, n: int, run: np.ndarray, everyone: bool) -> None:
        """The server's check at the end of step ``n``: every request admitted more than
        ``L(c)`` ago completes (oldest first), ``c`` the requests in progress."""
        h, out, rows = self.h, self.out, self.rows
        end = (n + 1) * h
        passes = [(None, run, everyone)]
        if n in out.resumes:  # the resume's own sweep first, before the held requests come in
            resuming = (out.he == n).any(axis=1)
            top = np.min(np.where(out.he == n, self.admitted[rows[:, None], np.minimum(out.hs, n + 1)], np.inf),
                         axis=1)
            passes.insert(0, (np.where(resuming, top, self.admitted[:, n + 1]), run & resuming, False))
        limit = self.limit_cap_t[n]
        # a bin can be held only once some case's outage has begun (count <= n + 1 <= hs before)
        held = [j for j in range(out.count) if n + 1 > self.held_from[j]]
        for top, active, all_active in passes:
            top = self.admitted[:, n + 1] if top is None else top
            c = np.maximum(top - self.done, 0.0)
            above = np.maximum(c - limit, 0.0)
            lat = self.base * np.exp(np.minimum(above * self.growth, _MAX_EXPONENT))
            if not self.no_slowdown:
                lat = lat * self.slowdown_t[n]
            cut = end - lat  # requests admitted before it complete
            count = np.minimum(np.maximum(np.ceil(cut / h - 0.5), 0), n + 1).astype(np.int64)  # bins with (i + .5)h < cut
            for j in held:  # held bins were admitted at their resume, not when sent
                count = np.where((cut <= out.end[:, j]) & (count > out.hs[:, j]),
                                 np.minimum(count, out.hs[:, j]), count)
            if all_active:
                self.front = np.maximum(self.front, count)
            else:
                self.front = np.where(active, np.maximum(self.front, count), self.front)
            self.done = self.adm_flat[self.row_base + self.front]

    def complete_slots(self, n: int, run: np.ndarray, everyone: bool) -> None:
        """Slots work at 1/S each (times threshold/outstanding when overwhelmed)."""
        rows = self.rows
        work = self.admitted[:, n + 1] - self.done
        busy = np.minimum(work, self.slots_cap_t[n])
        over = (self.threshold > 0) & (work > self.threshold)
        factor = np.where(over, self.threshold / np.maximum(work, 1e-300), 1.0)
        moved = np.minimum(work, busy * self.h / (self.service * self.slowdown_t[n]) * factor)
        self.done = self.done + moved if everyone else np.where(run, self.done + moved, self.done)
        while True:
            more = (self.front <= n) & (self.admitted[rows, self.front + 1] <= self.done + 1e-12)
            if not more.any():
                break
            self.front = self.front + more

    def settle(self, n: int, old_done: np.ndarray, old_front: np.ndarray) -> None:
        """Successes (work completed within its deadline) and the timeouts of step ``n``."""
        series, base = self.series, self.row_base
        simple = self.live_simple and n >= self.valid_from  # every case's bin due is live_from - 1
        if simple:
            live_from = self.live_base + (n + 1)
        else:
            live_from = np.minimum(np.maximum(self.live_base + (n + 1), 0), n + 1)
        good = np.maximum(0.0, self.done - np.maximum(old_done, self.adm_flat[base + live_from]))
        if good.any():
            lo = np.maximum(old_front, live_from)
            # the bin in the middle of those completed: its send time and its mix of levels
            # stand for the step's successes (latencies in ``series_of``)
            self.success[:, n] = good
            self.middle[:, n] = (lo + np.maximum(self.front, lo + 1) - 1) // 2
            series.totals["successes"] += good
            self.thinking += good if self.all_closed else good * self.closed_f
            if self.any_budget:
                dep = good * self.success_f
                self.deposit_step[self.budget_now + n] += dep
                self.win_deposit += dep
        # the bin whose deadline fell in this step (one per step: the deadline is fixed)
        if simple:
            j, valid = live_from - 1, True
        else:
            j = np.minimum(np.maximum(self.live_base + n, 0), n + 1)
            valid = j < live_from
        if simple or valid.any():
            at = base + j
            adm = self.adm_flat
            span = adm[at + 1] - adm[at]
            completed = np.minimum(np.maximum(self.done - adm[at], 0.0), span)
            k = self.sent_base + j
            waiting = np.maximum(self.sent_flat[k] - self.rejected_flat[k] - completed, 0.0)
            if not simple:
                waiting = waiting * valid
            # Each case on its own (a case's numbers never depend on the others in its batch):
            # its timeouts fail; a trace of a client goes back to thinking at once (as ``fail``
            # does with a trace of a retry).
            big = waiting > NEGLIGIBLE
            if big.all():
                series.totals["timeouts"] += waiting
                self.fail(n, waiting[:, None] * self.mix[self.rows, j % self.ring, :], None)
            elif big.any():
                timing_out = np.where(big, waiting, 0.0)
                series.totals["timeouts"] += timing_out
                self.fail(n, timing_out[:, None] * self.mix[self.rows, j % self.ring, :], None)
                self.thinking += np.where(big, 0.0, waiting) * self.closed_f
            else:
                self.thinking += waiting * self.closed_f

    def series_of(self) -> Series:
        """Each step's successes split by the level mix of their bin: first attempts (their
        latency the attempt's) and retried calls (the attempt's plus the call's age at it)."""
        series, h = self.series, self.h
        series.totals["work"] = self.sent.sum(axis=1)
        series.totals["offered"] = self.calls.sum(axis=1)
        # every step at once (a step without successes keeps no success and no latency: its
        # zero successes give zero first and retried calls, hence nan latencies)
        good, mid = self.success, self.middle
        sent = np.take_along_axis(self.sent, mid, axis=1)
        calls = np.take_along_axis(self.calls, mid, axis=1)
        share = np.where(sent > 0, calls / np.where(sent > 0, sent, 1.0), 1.0)
        age = np.take_along_axis(self.aged, mid, axis=1) / np.maximum(sent - calls, 1e-300)
        net2 = 2 * self.net[:, None]
        attempt = (np.arange(self.steps) + 1) * h - (mid + 0.5) * h + net2
        if self.kind == "slots":  # no request is served faster than its service time
            attempt = np.maximum(attempt, self.service[:, None] * self.slowdown[:, :self.steps] + net2)
        first, retried = good * share, good * (1.0 - share)
        series.first, series.retried = first, retried
        series.first_latency = np.where(first > 0, attempt, np.nan)
        series.retried_latency = np.where(retried > 1e-12, attempt + age, np.nan)
        return series

    def run(self) -> Series:
        with np.errstate(all="ignore"):
            return self._run()

    def _run(self) -> Series:
        self._step_rows()
        for n in range(self.steps):
            if n in self.out.resumes:
                self.resume(n)
            total = self.send(n)
            run, everyone = self.run_t[n], self.all_run[n]
            self.admit(n, total, run, everyone)
            old_done, old_front = self.done, self.front  # replaced, never changed in place
            if self.kind == "latency":
                self.complete_latency(n, run, everyone)
            else:
                self.complete_slots(n, run, everyone)
            self.settle(n, old_done, old_front)
        self.series.totals["unfinished"] = np.where(self.closed, self.clients - self.thinking, np.nan)
        return self.series_of()
