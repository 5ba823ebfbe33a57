"""Closed-loop clients against a LatencyServer, over arrays: ``sim.models.clients`` (a server that
replies, a workload that repeats: Poisson think times, a surge; client timeouts; a strategy
without limits, alone or after a ``sim.policies.retry_budget.RetryBudget``, Finagle's) and
``sim.models.servers.LatencyServer`` (``latency_rule = "current"``: checks on a
grid complete the requests whose elapsed time exceeds the latency at the current concurrency),
with ``sim.models.outage``'s gate (an unbounded accept queue, ``abandoned`` either way):
study 003's server and the metastability map, transcribed handler by handler.

As ``sim.kernels.pool_open``: one heap of ``(time, seq)`` keys with integer handler codes
(``H_*``), ring buffers for the requests in flight and the timeouts due, per-client arrays for
the clients' state; every push takes the next ``seq`` where the reference's does (a timeout that
waits its turn keeps the seq it took when its attempt was sent, as ``Clients.sends`` does), and
every draw reads the next value of the same stream, so a run is byte-identical to the
reference's. ``run`` stops between two events when it needs room, draws or the guard
(``NEED_ROOM``, ``NEED_DRAWS``, ``GUARD``); ``sim.runs.fast_latency`` drives it.
"""

from __future__ import annotations

import math

from sim.core import events as ev
from sim.kernels.delays import S_CONSTANT, S_NO_BACKOFF, S_NORMAL_JITTER, S_THINK_TIME, doubling_delay, normal_variate
from sim.kernels.heap import I_HEAP, I_SEQ, pop, push, push_seq
from sim.kernels.jit import maybe_njit
from sim.kernels.outputs import keep_latency, note_event
from sim.kernels.pool_open import (DONE, GUARD, NEED_DRAWS, NEED_ROOM, R_ACCEPTED, R_GOODPUT, R_IN_SERVICE,
                                   R_OFFERED, R_QUEUED, R_RETRIES, R_TIMED_OUT)
from sim.vocabulary.outcomes import TIMED_OUT

__all__ = ["DONE", "GUARD", "NEED_DRAWS", "NEED_ROOM", "run"]  # its statuses are pool_open's

# Handlers (the reference's function names).
H_CALL = 0  # clients.new_call
H_SEND = 1  # clients.sends (after a backoff; a budget has nothing to say but at a call's start)
H_RECEIVE = 2  # OutageGate.wrap(LatencyServer.receive_write)
H_COMPLETE = 3  # LatencyServer.complete
H_SUCCEEDED = 4  # clients.succeeded
H_TIMEOUT = 5  # clients.timeout_due, then on_timeout
H_AFTER_FAILURE = 6  # clients.after_failure (the budget's verdict, then the strategy's delay)
H_CHECK = 7  # LatencyServer.check (arg: the grid's tick)
H_SAMPLE = 8  # engine._schedule_sampling.sample
H_END = 9  # engine._schedule_sampling.end
H_PAUSE = 10  # OutageGate._pause
H_RESUME = 11  # OutageGate._resume (LatencyServer.resume first)
H_SYN = 12  # OutageGate's syn_again (arg: the attempt's token << SYN_BITS | the retransmit's index)
SYN_BITS = 3  # outage._TRY_BITS

# Integer configuration (``cfg_i``).
C_HAS_TIMEOUT = 0
C_STRATEGY = 1
C_JITTER_DRAWS = 2  # uniforms a backoff may draw (0, 1 or 2): the jitter stream's need per event
C_LAST_BUCKET = 3
C_RECORD = 4
C_LATENCY_SAMPLE = 5
C_DROP_ABANDONED = 6
C_HAS_SURGE = 7
C_BUDGET = 8  # a RetryBudget in the chain (``sim.policies.retry_budget``), asked before the strategy
C_BUDGET_SHARED = 9  # one budget for all clients (scope = "shared"), else one each
C_BUDGET_AT_SUCCESS = 10  # deposit = "success" (RequeueFilter), else as each request starts
C_BUDGET_HAS_CAP = 11  # max_retries_per_request
C_BUDGET_EMPTY = 12  # no deposits and no reserve: every retry denied
C_BUDGET_WINDOW = 13  # the WindowedAdder's slice, in ms
C_BUDGET_RESERVE = 14
C_BUDGET_DEPOSIT = 15
C_BUDGET_WITHDRAWAL = 16
C_BACKLOG = 17  # the accept queue's bound while paused (-1: none); beyond it SYNs retry (syn_gaps) or drop
C_SIZE = 18
# Float configuration (``cfg_f``).
G_TIMEOUT = 0
G_WIDTH = 1
G_INVERSE_WIDTH = 2
G_BASE = 3  # the strategy's base, constant or min_delay
G_CAP = 4  # its cap or max_delay
G_FACTOR = 5  # NormalJitterExpo's factor
G_JITTER = 6  # NormalJitterExpo's jitter
G_LATENCY = 7  # the server's base_latency
G_LIMIT = 8  # its concurrency_limit
G_K = 9
G_LOG_FACTOR = 10  # math.log(factor), as LatencyServer.law computes it
G_INTERVAL = 11  # check_interval
G_SURGE_START = 12
G_SURGE_END = 13
G_SURGE_FACTOR = 14
G_BUDGET_MS = 15  # the budget's ms per time unit
G_BUDGET_CAP = 16  # max_retries_per_request
G_SIZE = 17
# Integer state (``st_i``): the heap's first (``sim.kernels.heap``: I_HEAP = 0, I_SEQ = 1).
I_CHECK = 2  # the seq at which the guard wants to look
I_NET_HAVE = 3  # values held per client
I_JITTER_HAVE = 4
I_GAP_HAVE = 5
I_FLIGHT_HEAD = 6  # LatencyServer's in_flight: (start, client, token), oldest first
I_FLIGHT = 7
I_CONCURRENCY = 8
I_CHECKING = 9  # a check is scheduled
I_DUE_HEAD = 10  # clients' ``due``: every attempt's timeout, in the order sent
I_DUE = 11
I_SKIPPED = 12  # timeouts that never reached the heap (``wiring.unscheduled``)
I_PAUSED = 13
I_MARKERS = 14  # pause and resume items still in the heap
I_HELD = 15
I_GATE_DROPPED = 16
I_ABANDONED_SERVED = 17
I_SUCCESSES = 18
I_TIMEOUTS = 19
I_LATE = 20
I_LATENCIES = 21
I_STRIDE = 22
I_SINCE_KEPT = 23
I_RECORDED = 24
I_SILENT = 25
I_DROPPED_AT_END = 26
I_GAVE_UP = 27
I_DENIED = 28  # retries a policy denied (``PolicyEvents.retries_denied``)
I_REFUSED = 29  # arrivals that found the accept queue full (``OutageGate.refused``)
I_SYN_RETRIES = 30
I_CALLS = 31  # calls started: the next call's id (``History.calls``)
I_SIZE = 32
# A budget's WindowedAdder (``b_state`` per budget; its slices in ``b_buf``).
B_WRITER = 0
B_INDEX = 1
B_OLD = 2
# Float state (``st_f``).
F_TIME = 0  # the last popped item's time
F_LAST = 1  # the last recorded event's time
F_SIZE = 2

_SHIFT = ev.DETAIL_SHIFT
_TIMED_OUT_KIND = TIMED_OUT
_MAX_EXPONENT = 700.0  # sim.models.servers._MAX_LATENCY_EXPONENT (tests/test_fast_latency.py)
_BACKS_OFF = ev.pack(ev.CLIENT_BACKS_OFF)
_GIVES_UP = ev.CLIENT_GIVES_UP
_BUDGET_DENIED = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["retry_budget"])
_WRITE = ev.CLIENT_REQUESTS_WRITE
_SUCCEEDS = ev.CLIENT_SUCCEEDS
_TIMES_OUT = ev.CLIENT_TIMES_OUT
_ACCEPTS = ev.SERVER_ACCEPTS
_COMPLETES = ev.SERVER_COMPLETES
_PAUSES = ev.pack(ev.SERVER_PAUSES)
_RESUMES = ev.pack(ev.SERVER_RESUMES)
_NO_EVENT = ev.NO_EVENT


@maybe_njit
def latency(cfg_f, concurrency):
    """LatencyServer.law()(concurrency): the base latency up to the limit, then exponential."""
    if concurrency <= cfg_f[G_LIMIT]:
        return cfg_f[G_LATENCY]
    exponent = (concurrency - cfg_f[G_LIMIT]) / cfg_f[G_K] * cfg_f[G_LOG_FACTOR]
    return cfg_f[G_LATENCY] * math.exp(min(exponent, _MAX_EXPONENT))


@maybe_njit
def backoff(cfg_i, cfg_f, bo, jitter, jitter_pos, c, first, last_think):
    """Client c's next delay (its strategy's ``delays`` generator, one step); ``first``: the
    call's first failure, where the reference starts a fresh generator (ThinkTimeExpo's from
    the client's last think time, which a call does not change)."""
    kind = cfg_i[C_STRATEGY]
    if kind == S_CONSTANT:
        return cfg_f[G_BASE]
    if kind == S_NO_BACKOFF:
        return 0.0
    if kind == S_THINK_TIME:  # study 003's Go client: ThinkTimeExpo.think_delays
        last = last_think[c] if first else bo[c]
        delay = min(last * cfg_f[G_FACTOR], cfg_f[G_CAP])
        jit = cfg_f[G_JITTER]
        if jit != 0.0:
            delay += normal_variate(jitter, jitter_pos, c) * jit
        bo[c] = delay  # kept negative: Go sleeps it as 0 but grows the next from it
        return delay if delay > 0.0 else 0.0
    if kind == S_NORMAL_JITTER:
        if first:
            delay = cfg_f[G_BASE]
        else:
            floor = cfg_f[G_BASE]
            grown = floor if floor > bo[c] else bo[c]  # max(delay, floor)
            delay = min(grown * cfg_f[G_FACTOR], cfg_f[G_CAP])
            jit = cfg_f[G_JITTER]
            if jit != 0.0:
                delay = max(0.0, delay + normal_variate(jitter, jitter_pos, c) * jit * delay)
        bo[c] = delay
        return delay
    if first:
        bo[c] = cfg_f[G_BASE]
    return doubling_delay(kind, cfg_f[G_CAP], bo, c, jitter, jitter_pos, c)


@maybe_njit
def trunc_div(a, b):
    """Java's ``Long`` division (``retry_budget._trunc_div``): rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@maybe_njit
def budget_now(cfg_f, t):
    """``_Budget.now``: whole milliseconds."""
    return int(math.floor(t * cfg_f[G_BUDGET_MS]))


@maybe_njit
def adder_expired(cfg_i, b_buf, b_state, b, now):
    """``_WindowedAdder._expired``: the writer's slice is kept, the slices skipped are emptied."""
    n = b_buf.shape[1]
    i = b_state[b, B_INDEX]
    b_buf[b, i] = b_state[b, B_WRITER]
    b_state[b, B_WRITER] = 0
    i = (i + 1) % n
    nskip = min(trunc_div(now - b_state[b, B_OLD], cfg_i[C_BUDGET_WINDOW]) - 1, n)
    if nskip > 0:
        r = min(nskip, n - i)
        for j in range(i, i + r):
            b_buf[b, j] = 0
        for j in range(0, nskip - r):
            b_buf[b, j] = 0
        i = (i + nskip) % n
    b_state[b, B_INDEX] = i
    b_state[b, B_OLD] = now


@maybe_njit
def adder_add(cfg_i, b_buf, b_state, b, x, now):
    """``_WindowedAdder.add``."""
    if now - b_state[b, B_OLD] >= cfg_i[C_BUDGET_WINDOW]:
        adder_expired(cfg_i, b_buf, b_state, b, now)
    b_state[b, B_WRITER] += x


@maybe_njit
def adder_sum(cfg_i, b_buf, b_state, b, now):
    """``_WindowedAdder.sum``."""
    if now - b_state[b, B_OLD] >= cfg_i[C_BUDGET_WINDOW]:
        adder_expired(cfg_i, b_buf, b_state, b, now)
    total = b_state[b, B_WRITER]
    for j in range(b_buf.shape[1]):
        total += b_buf[b, j]
    return total


@maybe_njit
def budget_deposit(cfg_i, cfg_f, b_buf, b_state, b, t):
    """``_Budget.deposit``."""
    if cfg_i[C_BUDGET_EMPTY] == 0:
        adder_add(cfg_i, b_buf, b_state, b, cfg_i[C_BUDGET_DEPOSIT], budget_now(cfg_f, t))


@maybe_njit
def budget_withdraw(cfg_i, cfg_f, b_buf, b_state, b, t):
    """``_Budget.try_withdraw``: a retry's withdrawal, if the balance and reserve cover it."""
    if cfg_i[C_BUDGET_EMPTY] != 0:
        return False
    now = budget_now(cfg_f, t)
    if adder_sum(cfg_i, b_buf, b_state, b, now) + cfg_i[C_BUDGET_RESERVE] >= cfg_i[C_BUDGET_WITHDRAWAL]:
        adder_add(cfg_i, b_buf, b_state, b, -cfg_i[C_BUDGET_WITHDRAWAL], now)
        return True
    return False


@maybe_njit
def budget_begin(cfg_i, cfg_f, b_buf, b_state, remaining, c, t):
    """``_BudgetLink._begin`` as a call's first attempt is asked (``on_attempt``): its deposit
    (RetryFilter's moment), then its retry cap from the balance (``max_retries_per_request``).
    A link's ``start != call`` case (a call it never saw begin) needs a run started from a
    state, which no kernel run is."""
    b = 0 if cfg_i[C_BUDGET_SHARED] != 0 else c
    if cfg_i[C_BUDGET_AT_SUCCESS] == 0:
        budget_deposit(cfg_i, cfg_f, b_buf, b_state, b, t)
    if cfg_i[C_BUDGET_HAS_CAP] != 0:
        balance = 0
        if cfg_i[C_BUDGET_EMPTY] == 0:
            count = adder_sum(cfg_i, b_buf, b_state, b, budget_now(cfg_f, t)) + cfg_i[C_BUDGET_RESERVE]
            balance = trunc_div(count, cfg_i[C_BUDGET_WITHDRAWAL])
        remaining[c] = math.ceil(cfg_f[G_BUDGET_CAP] * balance)


@maybe_njit
def next_call(cfg_i, cfg_f, hf, hi, st_i, gaps, gap_pos, last_think, c, t):
    """``Clients.think_then_call``: the next call after a think time (shorter in a surge), which
    a strategy that starts from it reads (``last_think``)."""
    gap = gaps[c, gap_pos[c]]
    gap_pos[c] += 1
    if cfg_i[C_HAS_SURGE] != 0 and cfg_f[G_SURGE_START] <= t < cfg_f[G_SURGE_END]:
        gap /= cfg_f[G_SURGE_FACTOR]
    last_think[c] = gap
    push(hf, hi, st_i, t + gap, H_CALL, c, 0)


@maybe_njit
def sweep(cfg_f, hf, hi, st_i, fl_f, fl_i, t):
    """LatencyServer.sweep: complete, oldest first, every request in flight longer than the
    latency at the current concurrency; each completion an item at this instant."""
    delay = latency(cfg_f, st_i[I_CONCURRENCY])
    cap = fl_f.shape[0]
    while st_i[I_FLIGHT] > 0:
        head = st_i[I_FLIGHT_HEAD]
        if not (t - fl_f[head] > delay):
            break
        st_i[I_FLIGHT_HEAD] = (head + 1) % cap
        st_i[I_FLIGHT] -= 1
        push(hf, hi, st_i, t, H_COMPLETE, fl_i[head, 0], fl_i[head, 1])


@maybe_njit
def accept(cfg_f, hf, hi, st_i, fl_f, fl_i, series, c, tok, t):
    """LatencyServer.receive_write: the request is in flight from now; a check is scheduled on
    the grid if none is. Its packed event."""
    concurrency = st_i[I_CONCURRENCY] + 1
    st_i[I_CONCURRENCY] = concurrency
    j = (st_i[I_FLIGHT_HEAD] + st_i[I_FLIGHT]) % fl_f.shape[0]
    fl_f[j] = t
    fl_i[j, 0] = c
    fl_i[j, 1] = tok
    st_i[I_FLIGHT] += 1
    series[R_ACCEPTED, int(t * cfg_f[G_INVERSE_WIDTH])] += 1
    if st_i[I_CHECKING] == 0:
        st_i[I_CHECKING] = 1
        interval = cfg_f[G_INTERVAL]
        n = int(t / interval) + 1  # the next tick of the grid
        push(hf, hi, st_i, n * interval, H_CHECK, -1, n)
    return _ACCEPTS | ((concurrency + 1) << _SHIFT)


@maybe_njit
def time_out(cfg_f, hf, hi, st_i, series, token, waiting, tries, c, tok, t):
    """``Clients.on_timeout`` (a timeout due, or a connect() that failed): nothing if the client
    no longer waits for that attempt, else the failure decided at once. Its packed event."""
    if tok != token[c] or waiting[c] == 0:
        return _NO_EVENT
    waiting[c] = 0
    st_i[I_TIMEOUTS] += 1
    series[R_TIMED_OUT, int(t * cfg_f[G_INVERSE_WIDTH])] += 1
    push(hf, hi, st_i, t, H_AFTER_FAILURE, c, _TIMED_OUT_KIND)
    return _TIMES_OUT | ((tries[c] + 1) << _SHIFT)


@maybe_njit
def hold(st_i, held, c, tok):
    """OutageGate: an arrival held at the door until the resume."""
    n_held = st_i[I_HELD]
    held[n_held, 0] = c
    held[n_held, 1] = tok
    st_i[I_HELD] = n_held + 1


@maybe_njit
def run(cfg_i, cfg_f, st_i, st_f, hf, hi, fl_f, fl_i, df, di, held, token, waiting, active, tries,
        first, bo, attempts, series, lat_v, lat_c, lat_t, net, net_pos, jitter, jitter_pos, gaps,
        gap_pos, rec_t, rec_c, rec_p, b_buf, b_state, remaining, last_think, syn_gaps, call_of, rec_k):
    """Process events until the heap is empty (``DONE``) or Python must step in. ``call_of``:
    each client's current call id, ``rec_k``: each recorded event's (``clients``' ``call_of``)."""
    has_timeout = cfg_i[C_HAS_TIMEOUT] != 0
    jitter_draws = cfg_i[C_JITTER_DRAWS]
    last_bucket = cfg_i[C_LAST_BUCKET]
    record = cfg_i[C_RECORD] != 0
    latency_sample = cfg_i[C_LATENCY_SAMPLE]
    drop_abandoned = cfg_i[C_DROP_ABANDONED] != 0
    backlog = cfg_i[C_BACKLOG]
    budget = cfg_i[C_BUDGET] != 0
    budget_shared = cfg_i[C_BUDGET_SHARED] != 0
    budget_at_success = cfg_i[C_BUDGET_AT_SUCCESS] != 0
    timeout = cfg_f[G_TIMEOUT]
    width = cfg_f[G_WIDTH]
    inv = cfg_f[G_INVERSE_WIDTH]
    interval = cfg_f[G_INTERVAL]
    heap_cap = hf.shape[0]
    flight_cap = fl_f.shape[0]
    due_cap = df.shape[0]
    net_have = st_i[I_NET_HAVE]
    jitter_have = st_i[I_JITTER_HAVE]
    gap_have = st_i[I_GAP_HAVE]
    while st_i[I_HEAP] > 0:
        # Room and draws for the next event, checked before it is popped: an event pushes at
        # most one item per request in flight or held (a check, a resume) and a few more; a
        # client's event draws at most one network delay, one think time and two uniforms.
        if (st_i[I_HEAP] + st_i[I_FLIGHT] + st_i[I_HELD] + 8 > heap_cap or st_i[I_FLIGHT] + 2 > flight_cap
                or st_i[I_DUE] + 2 > due_cap or st_i[I_HELD] + 2 > held.shape[0]
                or st_i[I_LATENCIES] + 2 > lat_v.shape[0]
                or (record and st_i[I_RECORDED] + 2 > rec_t.shape[0])):
            return NEED_ROOM
        c = hi[0, 2]
        if c >= 0 and (net_pos[c] >= net_have or gap_pos[c] >= gap_have
                       or jitter_pos[c] + jitter_draws > jitter_have):
            return NEED_DRAWS
        s = hi[0, 0]
        if s >= st_i[I_CHECK]:
            return GUARD
        t = hf[0]
        handler = hi[0, 1]
        a = hi[0, 3]
        pop(hf, hi, st_i)
        st_f[F_TIME] = t
        p = _NO_EVENT
        call = -1  # the event's call (a client's event of one)
        if handler == H_CALL or handler == H_SEND:
            if handler == H_CALL:  # new_call, then (asked, with a chain) sends
                active[c] = 1
                first[c] = t
                call_of[c] = st_i[I_CALLS]
                st_i[I_CALLS] += 1
                tries[c] = 0
                series[R_OFFERED, int(t * inv)] += 1
                if budget:
                    budget_begin(cfg_i, cfg_f, b_buf, b_state, remaining, c, t)
            tok = token[c] + 1
            token[c] = tok
            waiting[c] = 1
            k = tries[c] + 1
            tries[c] = k
            attempts[c] += 1
            if k > 1:
                series[R_RETRIES, int(t * inv)] += 1
            push(hf, hi, st_i, t + net[c, net_pos[c]], H_RECEIVE, c, tok)
            net_pos[c] += 1
            if has_timeout:
                due_at = t + timeout
                seq = st_i[I_SEQ]  # taken now; pushed now, or when its turn comes
                st_i[I_SEQ] = seq + 1
                n_due = st_i[I_DUE]
                if n_due == 0:
                    push_seq(hf, hi, st_i, due_at, seq, H_TIMEOUT, c, tok)
                j = (st_i[I_DUE_HEAD] + n_due) % due_cap
                df[j] = due_at
                di[j, 0] = seq
                di[j, 1] = c
                di[j, 2] = tok
                st_i[I_DUE] = n_due + 1
            p = _WRITE | ((k + 1) << _SHIFT)
            call = call_of[c]
        elif handler == H_RECEIVE:
            if st_i[I_PAUSED] == 0:
                p = accept(cfg_f, hf, hi, st_i, fl_f, fl_i, series, c, a, t)
            elif backlog >= 0 and st_i[I_HELD] >= backlog:  # OutageGate.wrap: the queue is full
                st_i[I_REFUSED] += 1
                if syn_gaps.shape[0] > 0:  # "syn-retry": the SYN again, 1 s later
                    push(hf, hi, st_i, t + syn_gaps[0], H_SYN, c, a << SYN_BITS)
            else:  # held at the door until the resume
                hold(st_i, held, c, a)
        elif handler == H_SYN:  # OutageGate's syn_again: retransmit number kk of attempt tok's SYN
            tok = a >> SYN_BITS
            kk = a & ((1 << SYN_BITS) - 1)
            if waiting[c] != 0 and token[c] == tok:  # else the client closed the socket
                if kk == syn_gaps.shape[0] - 1:  # the wait after the last: connect() fails
                    p = time_out(cfg_f, hf, hi, st_i, series, token, waiting, tries, c, tok, t)
                    call = call_of[c]
                else:
                    st_i[I_SYN_RETRIES] += 1
                    if st_i[I_PAUSED] == 0:
                        p = accept(cfg_f, hf, hi, st_i, fl_f, fl_i, series, c, tok, t)
                    elif st_i[I_HELD] >= backlog:
                        push(hf, hi, st_i, t + syn_gaps[kk + 1], H_SYN, c, a + 1)
                    else:
                        hold(st_i, held, c, tok)
        elif handler == H_CHECK:
            if st_i[I_PAUSED] != 0:
                st_i[I_CHECKING] = 0  # stopped: the resume checks again
            else:
                sweep(cfg_f, hf, hi, st_i, fl_f, fl_i, t)
                if st_i[I_FLIGHT] > 0:
                    push(hf, hi, st_i, (a + 1) * interval, H_CHECK, -1, a + 1)
                else:
                    st_i[I_CHECKING] = 0
        elif handler == H_COMPLETE:
            concurrency = st_i[I_CONCURRENCY] - 1
            st_i[I_CONCURRENCY] = concurrency
            push(hf, hi, st_i, t + net[c, net_pos[c]], H_SUCCEEDED, c, a)
            net_pos[c] += 1
            p = _COMPLETES | ((concurrency + 1) << _SHIFT)
        elif handler == H_SUCCEEDED:
            if a != token[c] or waiting[c] == 0:
                st_i[I_LATE] += 1
            else:
                waiting[c] = 0
                active[c] = 0
                st_i[I_SUCCESSES] += 1
                keep_latency(lat_v, lat_c, lat_t, st_i, I_LATENCIES, I_STRIDE, I_SINCE_KEPT, t - first[c], c, t,
                             latency_sample)
                series[R_GOODPUT, int(t * inv)] += 1
                if budget and budget_at_success:  # heard: RequeueFilter's deposit
                    budget_deposit(cfg_i, cfg_f, b_buf, b_state, 0 if budget_shared else c, t)
                next_call(cfg_i, cfg_f, hf, hi, st_i, gaps, gap_pos, last_think, c, t)
                p = _SUCCEEDS | ((tries[c] + 1) << _SHIFT)
                call = call_of[c]
        elif handler == H_TIMEOUT:
            st_i[I_DUE_HEAD] = (st_i[I_DUE_HEAD] + 1) % due_cap
            st_i[I_DUE] -= 1
            while st_i[I_DUE] > 0:  # the next timeout still live gets the heap item
                head = st_i[I_DUE_HEAD]
                c2 = di[head, 1]
                tok2 = di[head, 2]
                if waiting[c2] != 0 and token[c2] == tok2:
                    push_seq(hf, hi, st_i, df[head], di[head, 0], H_TIMEOUT, c2, tok2)
                    break
                st_i[I_DUE_HEAD] = (head + 1) % due_cap
                st_i[I_DUE] -= 1
                st_i[I_SKIPPED] += 1
            p = time_out(cfg_f, hf, hi, st_i, series, token, waiting, tries, c, a, t)
            call = call_of[c]
        elif handler == H_AFTER_FAILURE:
            k = tries[c]
            call = call_of[c]
            verdict = 0  # with a budget (the chain's first link): 0 retry, 1 denied, 2 request limit
            if budget:
                if cfg_i[C_BUDGET_HAS_CAP] != 0 and remaining[c] <= 0:
                    verdict = 2
                elif not budget_withdraw(cfg_i, cfg_f, b_buf, b_state, 0 if budget_shared else c, t):
                    verdict = 1
                else:
                    remaining[c] -= 1
            if verdict == 0:  # the strategy's delay (the chain's next link)
                delay = backoff(cfg_i, cfg_f, bo, jitter, jitter_pos, c, k == 1, last_think)
                push(hf, hi, st_i, t + delay, H_SEND, c, 0)
                p = _BACKS_OFF
            else:  # GiveUp: the call ends, the next follows a think time
                st_i[I_GAVE_UP] += 1
                active[c] = 0
                next_call(cfg_i, cfg_f, hf, hi, st_i, gaps, gap_pos, last_think, c, t)
                if verdict == 1:
                    st_i[I_DENIED] += 1
                    p = _BUDGET_DENIED
                else:
                    p = _GIVES_UP | ((k + 1) << _SHIFT)
        elif handler == H_SAMPLE:
            series[R_IN_SERVICE, a] = st_i[I_CONCURRENCY]
            series[R_QUEUED, a] = 0
            if a < last_bucket:
                push(hf, hi, st_i, (a + 2) * width, H_SAMPLE, -1, a + 1)
        elif handler == H_PAUSE:  # nothing of this server waits out a pause: nothing moves
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 1
            if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0:
                p = _PAUSES
        elif handler == H_RESUME:
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 0
            sweep(cfg_f, hf, hi, st_i, fl_f, fl_i, t)  # LatencyServer.resume, first
            if st_i[I_FLIGHT] > 0 and st_i[I_CHECKING] == 0:
                st_i[I_CHECKING] = 1
                n = int(t / interval) + 1
                push(hf, hi, st_i, n * interval, H_CHECK, -1, n)
            if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0:
                p = _RESUMES
            for j in range(st_i[I_HELD]):
                hc = held[j, 0]
                htok = held[j, 1]
                if waiting[hc] != 0 and token[hc] == htok:
                    push(hf, hi, st_i, t, H_RECEIVE, hc, htok)
                elif drop_abandoned:
                    st_i[I_GATE_DROPPED] += 1
                else:
                    st_i[I_ABANDONED_SERVED] += 1
                    push(hf, hi, st_i, t, H_RECEIVE, hc, htok)
            st_i[I_HELD] = 0
        else:  # H_END: the horizon; what is left never runs
            series[R_IN_SERVICE, last_bucket] = st_i[I_CONCURRENCY]
            series[R_QUEUED, last_bucket] = 0
            st_i[I_DROPPED_AT_END] = st_i[I_HEAP]
            st_i[I_HEAP] = 0
        note_event(st_i, st_f, I_SILENT, I_RECORDED, F_LAST, record, rec_t, rec_c, rec_p, rec_k, t, c, p, call,
                   _NO_EVENT)
    return DONE
