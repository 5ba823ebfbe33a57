"""Finagle's RetryBudget: retries as a percentage of recent requests, plus a reserve.

Sources (twitter/finagle at 4feb34cb, 2024-10): ``finagle-core/.../service/RetryBudget.scala``
(``RetryBudget.apply``), ``RequeueFilter.scala``, ``RetryFilter.scala`` and ``Retries.scala``
(``MaxRequeuesPerReq = 0.2``); twitter/util ``TokenBucket.scala`` (``newLeakyBucket``) and
``WindowedAdder.scala``. Transcribed on Finagle's own integer milliseconds: a deposit is 1000
tokens, a retry withdraws ``int(1000 / percentCanRetry)`` (5000 at 20%) if the balance
(deposits of the last ``ttl``, minus withdrawals of the last ``ttl``, plus a reserve of
``min_retries_per_s × ttl_s × withdrawal``) covers it. Deposits and withdrawals expire together,
slice by slice: the window has 10 slices of ``ttl/10`` that start when the first operation after
the previous slice's end arrives (Finagle's ``WindowedAdder``), so an entry lives between 0.9·ttl
and ttl and more.

When a request deposits is the filter's choice, and the two filters differ (``deposit``):

- ``"request"``: ``RetryFilter.apply`` deposits when each request starts, whatever its outcome,
  so under total failure retries stay ``percentCanRetry`` of the requests plus the reserve.
- ``"success"``: ``RequeueFilter.apply`` deposits only after a response its classifier calls
  successful (since f3a7326e, 2020-08-25, "only deposit on success"), so under total failure
  only the reserve is left.

``max_retries_per_request`` (RequeueFilter's ``maxRetriesPerReq``) also caps a request's retries
at ``ceil(fraction × balance in retries)``, computed when the request starts, before this
request's deposit in RequeueFilter (it has none yet) and after it with ``deposit = "request"``
(Finagle's ``RetryFilter`` above a ``RequeueFilter``, ``Retries.moduleWithRetryPolicy``).

A hedged copy (``sim.models.hedging``) is a retry sent before the failure: it withdraws as a
retry does and is refused when a retry would be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.policies.seam import GiveUp, Link, ViewedPolicy, register_policy

EXHAUSTED = GiveUp("retry_budget")
REQUEST_LIMIT = GiveUp("retry_budget_request_limit", denied=False)
SCALE = 1000  # Finagle's TokenRetryBudget.ScaleFactor
SLICES = 10
DEPOSITS = ("request", "success")  # when a request deposits: RetryFilter's moment, RequeueFilter's


def _trunc_div(a: int, b: int) -> int:
    """Java/Scala ``Long`` division: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@register_policy
@dataclass(frozen=True, kw_only=True)
class RetryBudget(ViewedPolicy):
    """Each request deposits, each retry withdraws 1/percent of a deposit; deposits expire after ttl."""

    percent: float = 20.0
    min_retries_per_s: int = 10
    ttl: float = 10000.0
    max_retries_per_request: float | None = None
    deposit: str = "request"
    unit_seconds: float = 0.001

    def validate(self) -> None:
        if not self.unit_seconds > 0:
            raise ParamError("unit_seconds", f"must be > 0, got {self.unit_seconds!r}")
        if not 0 <= self.percent <= 100 * SCALE:
            raise ParamError("percent", f"must be between 0 and {100 * SCALE}, got {self.percent!r}")
        m = self.min_retries_per_s
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise ParamError("min_retries_per_s", f"must be an integer >= 0, got {m!r}")
        seconds = self.ttl * self.unit_seconds
        if not 1 <= seconds <= 60:
            raise ParamError("ttl", f"must be between 1 s and 60 s (Finagle), got {self.ttl!r} time units = {seconds:g} s")
        if self.max_retries_per_request is not None and not self.max_retries_per_request >= 0:
            raise ParamError("max_retries_per_request", f"must be >= 0, got {self.max_retries_per_request!r}")
        if self.deposit not in DEPOSITS:
            raise ParamError("deposit", f"must be {' or '.join(map(repr, DEPOSITS))}, got {self.deposit!r}",
                             '"request": each request deposits as it starts (RetryFilter); '
                             '"success": after a successful response (RequeueFilter)')

    def state(self) -> _Budget:
        ttl_ms = round(self.ttl * self.unit_seconds * 1000)
        fraction = self.percent / 100.0
        deposit = 0 if fraction == 0.0 else SCALE
        withdrawal = 1 if fraction == 0.0 else int(SCALE / fraction)
        reserve = self.min_retries_per_s * (ttl_ms // 1000) * withdrawal
        empty = self.min_retries_per_s == 0 and fraction == 0.0
        return _Budget(ttl_ms, reserve, deposit, withdrawal, empty, self.unit_seconds * 1000)

    def view(self, state: object) -> Link:
        assert isinstance(state, _Budget)
        link = _BudgetLink if self.deposit == "request" else _OnSuccessBudgetLink
        return link(state, self.max_retries_per_request)


class _WindowedAdder:
    """twitter/util WindowedAdder(range, slices, now): a sum over the last ``range`` ms."""

    __slots__ = ("window", "n", "writer", "buf", "i", "old")

    def __init__(self, range_ms: int, slices: int, now: int) -> None:
        self.window = range_ms // slices
        self.n = slices - 1
        self.writer = 0
        self.buf = [0] * self.n
        self.i = 0
        self.old = now

    def _expired(self, now: int) -> None:
        n = self.n
        self.buf[self.i] = self.writer
        self.writer = 0
        self.i = (self.i + 1) % n
        nskip = min(_trunc_div(now - self.old, self.window) - 1, n)
        if nskip > 0:
            r = min(nskip, n - self.i)
            self.buf[self.i:self.i + r] = [0] * r
            self.buf[0:nskip - r] = [0] * (nskip - r)
            self.i = (self.i + nskip) % n
        self.old = now

    def add(self, x: int, now: int) -> None:
        if now - self.old >= self.window:
            self._expired(now)
        self.writer += x

    def sum(self, now: int) -> int:
        if now - self.old >= self.window:
            self._expired(now)
        return self.writer + sum(self.buf)


class _Budget:
    """TokenBucket.newLeakyBucket(ttl, reserve) inside a TokenRetryBudget; times in whole ms."""

    __slots__ = ("ttl_ms", "reserve", "deposit_amount", "withdrawal", "empty", "ms_per_unit", "adder")

    def __init__(self, ttl_ms: int, reserve: int, deposit: int, withdrawal: int, empty: bool,
                 ms_per_unit: float) -> None:
        self.ttl_ms = ttl_ms
        self.reserve = reserve
        self.deposit_amount = deposit
        self.withdrawal = withdrawal
        self.empty = empty
        self.ms_per_unit = ms_per_unit
        self.adder = _WindowedAdder(ttl_ms, SLICES, 0)

    def now(self, t: float) -> int:
        return math.floor(t * self.ms_per_unit)

    def deposit(self, t: float) -> None:
        if not self.empty:
            self.adder.add(self.deposit_amount, self.now(t))

    def count(self, t: float) -> int:
        return self.adder.sum(self.now(t)) + self.reserve

    def balance(self, t: float) -> int:
        return 0 if self.empty else _trunc_div(self.count(t), self.withdrawal)

    def try_withdraw(self, t: float) -> bool:
        if self.empty:
            return False
        now = self.now(t)
        if self.adder.sum(now) + self.reserve >= self.withdrawal:
            self.adder.add(-self.withdrawal, now)
            return True
        return False


class _BudgetLink(Link):
    """A client's view: the budget (own or shared) and this request's remaining retries; each
    request deposits as it starts (``RetryFilter.apply``)."""

    __slots__ = ("budget", "cap", "remaining", "call")

    def __init__(self, budget: _Budget, cap: float | None) -> None:
        self.budget = budget
        self.cap = cap
        self.remaining = 0
        self.call = -1.0

    deposits_at_start = True

    def _begin(self, t: float, start: float) -> None:
        """A request starts: deposit (RetryFilter), then fix its retry cap from the balance
        (RequeueFilter.apply: ``ceil(maxRetriesPerReq × retryBudget.balance)``)."""
        self.call = start
        budget = self.budget
        if self.deposits_at_start:
            budget.deposit(t)
        if self.cap is not None:
            self.remaining = math.ceil(self.cap * budget.balance(t))

    def on_attempt(self, t: float, attempt: int, start: float) -> None:
        if attempt == 1:
            self._begin(t, start)

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if start != self.call:
            self._begin(start, start)
        if verdict.__class__ is GiveUp:
            return verdict
        if self.cap is not None and self.remaining <= 0:
            return REQUEST_LIMIT
        if not self.budget.try_withdraw(t):
            return EXHAUSTED
        self.remaining -= 1
        return verdict

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        # A hedge is a retry sent early: it withdraws as one (and counts against the request's cap).
        if self.cap is not None and self.remaining <= 0:
            return False
        if not self.budget.try_withdraw(t):
            return False
        self.remaining -= 1
        return True


class _OnSuccessBudgetLink(_BudgetLink):
    """RequeueFilter's order: the cap from the balance as the request starts, no deposit then;
    one deposit when the request ends in a successful response (``respond`` → ``deposit()``)."""

    __slots__ = ()
    deposits_at_start = False

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self.budget.deposit(t)
