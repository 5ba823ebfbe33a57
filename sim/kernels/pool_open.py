"""Open arrivals against a PoolServer, over arrays: ``sim.models.open_clients`` (plain strategies)
and ``sim.models.pool`` (FIFO, ``queue_size``, ``queue_timeout``), with ``sim.models.outage``'s
gate for outages (an unbounded accept queue) and ``sim.models.incidents`` (capacity, slowdown,
error rate), transcribed handler by handler.

The reference is those two modules; this is the same model, written so numba can compile it:
one heap of ``(time, seq)`` keys with integer handler codes (``H_*``) instead of tuples of
closures, ring buffers for the queue and the timeouts due, and per-slot arrays for the calls in
flight. Every push takes the next ``seq`` where the reference's does, so simultaneous events pop
in the same order; every draw reads the next value of the same stream (``sim.kernels.blocks``
draws them in numpy, block by block, exactly as ``sim.core.streams`` does), so a run is
byte-identical to the reference's.

``run`` processes events until it needs something only Python can give: more room in an array,
the next block of a stream, or the engine's guard check (``NEED_ROOM``, ``NEED_DRAWS``,
``GUARD``). It checks before popping an event, so it always stops between two events and can be
called again (``sim.runs.fast`` drives it).
"""

from __future__ import annotations

from sim.core import events as ev
from sim.kernels.delays import S_CONSTANT, S_NO_BACKOFF, doubling_delay
from sim.kernels.heap import I_HEAP, heapify, pop, push
from sim.kernels.jit import maybe_njit
from sim.kernels.outputs import keep_latency, note_event
from sim.vocabulary.outcomes import TIMED_OUT

# Handlers (the reference's function names).
H_CALL = 0  # open_clients.plain_call: an arrival
H_RECEIVE = 1  # pool.receive_write
H_SERVED = 2  # pool.complete
H_DROP = 3  # pool.drop
H_REJECTED = 4  # open_clients.failure_reply(REJECTED)
H_SUCCEEDED = 5  # open_clients.succeeded
H_TIMEOUT = 6  # open_clients.on_timeout
H_AFTER_FAILURE = 7  # open_clients.after_failure (plain)
H_SEND = 8  # open_clients.sends
H_SAMPLE = 9  # engine._schedule_sampling.sample
H_END = 10  # engine._schedule_sampling.end
H_PAUSE = 11  # outage.OutageGate._pause (arg: the outage's index)
H_RESUME = 12  # outage.OutageGate._resume
H_INCIDENT_BEGINS = 13  # incidents.Incidents._begin (arg: the incident's index)
H_INCIDENT_ENDS = 14  # incidents.Incidents._finish

# Incident kinds (``events.INCIDENT_KINDS``' indices).
K_CAPACITY = ev.INCIDENT_KINDS.index("capacity")
K_SLOWDOWN = ev.INCIDENT_KINDS.index("slowdown")
K_ERROR_RATE = ev.INCIDENT_KINDS.index("error_rate")

# Why ``run`` returned.
DONE = 0
NEED_ROOM = 1
NEED_DRAWS = 2
GUARD = 3

# Series rows (``sim.core.series``: SERIES_NAMES, then PoolServer's server_drops).
R_OFFERED, R_RETRIES, R_ACCEPTED, R_REJECTED, R_TIMED_OUT, R_IN_SERVICE, R_QUEUED, R_GOODPUT, R_DROPS = range(9)

# Integer configuration (``cfg_i``).
C_CLIENTS = 0
C_WORKERS = 1
C_QUEUE_SIZE = 2  # -1: unbounded
C_HAS_TIMEOUT = 3
C_HAS_QUEUE_TIMEOUT = 4
C_DRAWS_SERVICE = 5  # 0: constant service
C_STRATEGY = 6
C_JITTER = 7  # the strategy draws jitter
C_LAST_BUCKET = 8
C_RECORD = 9
C_LATENCY_SAMPLE = 10
C_DROP_ABANDONED = 11  # abandoned = "drop": a held request nobody waits for is dropped at the resume
C_MAX_ATTEMPTS = 12  # the strategy's max_attempts (0: none)
C_HAS_MAX_ELAPSED = 13
C_ERRORS = 14  # an error-rate incident: its draws (incidents.Incidents.wrap)
C_SIZE = 15
# Float configuration (``cfg_f``).
G_TIMEOUT = 0
G_QUEUE_TIMEOUT = 1
G_SERVICE = 2  # constant service time
G_WIDTH = 3
G_INVERSE_WIDTH = 4
G_BASE = 5  # the strategy's base (or constant)
G_CAP = 6
G_MAX_ELAPSED = 7
G_SIZE = 8
# Integer state (``st_i``).
# I_HEAP = 0, I_SEQ = 1: the heap's (``sim.kernels.heap``)
I_Q_HEAD = 2
I_QUEUED = 3
I_DUE_HEAD = 4
I_DUE = 5
I_TOKEN = 6  # the next token
I_SLOTS = 7
I_FREE = 8
I_BUSY = 9
I_SILENT = 10
I_LATENCIES = 11
I_STRIDE = 12
I_SINCE_KEPT = 13
I_RECORDED = 14
I_CHECK = 15  # the seq at which the guard wants to look
I_NET_HAVE = 16  # values held per client / in the server's buffer
I_JITTER_HAVE = 17
I_GAP_HAVE = 18
I_SERVICE_POS = 19
I_SERVICE_HAVE = 20
I_SUCCESSES = 21
I_REJECTIONS = 22
I_TIMEOUTS = 23
I_LATE = 24
I_DROPPED_AT_END = 25
I_PAUSED = 26  # the outage gate's state (sim.models.outage)
I_MARKERS = 27  # pause and resume items still in the heap
I_HELD = 28  # arrivals held while paused
I_GATE_DROPPED = 29  # held requests dropped at a resume (abandoned = "drop")
I_GAVE_UP = 30
I_WORKERS = 31  # the pool's workers now (capacity incidents change them)
I_PENDING_WORKERS = 32  # a capacity change that fell in an outage, for the resume (-1: none)
I_ERROR_POS = 33
I_ERROR_HAVE = 34
I_CALLS = 35  # calls started: the next call's id (``History.calls``)
I_SIZE = 36
# Float state (``st_f``).
F_TIME = 0  # the last popped item's time
F_LAST = 1  # the last recorded event's time
F_LAST_EMPTY = 2  # when the queue was last empty (the reference keeps it; FIFO never reads it)
F_SLOWDOWN = 3  # service that starts now takes this many times longer (slowdown incidents)
F_ERROR_RATE = 4  # attempts fail with this probability (error-rate incidents)
F_SIZE = 5

_SHIFT = ev.DETAIL_SHIFT
_REASON_BITS = 3  # pool._REASON_BITS
_KIND_BITS = 3  # open_clients.KIND_BITS
_QUEUE_TIMEOUT = ev.DROP_REASON_INDEX["queue_timeout"]
_TIMED_OUT_KIND = TIMED_OUT
_FIRST_WRITE = ev.pack(ev.CLIENT_REQUESTS_WRITE, 1)
_BACKS_OFF = ev.pack(ev.CLIENT_BACKS_OFF)
_GIVES_UP = ev.CLIENT_GIVES_UP
_REJECTS = ev.pack(ev.SERVER_REJECTS)
_WRITE = ev.CLIENT_REQUESTS_WRITE
_SUCCEEDS = ev.CLIENT_SUCCEEDS
_TIMES_OUT = ev.CLIENT_TIMES_OUT
_ACCEPTS = ev.SERVER_ACCEPTS
_QUEUES = ev.SERVER_QUEUES
_COMPLETES = ev.SERVER_COMPLETES
_DROPS = ev.SERVER_DROPS
_PAUSES = ev.pack(ev.SERVER_PAUSES)
_RESUMES = ev.pack(ev.SERVER_RESUMES)
_INCIDENT_STARTS = ev.SERVER_INCIDENT_STARTS
_INCIDENT_ENDS = ev.SERVER_INCIDENT_ENDS
_NO_EVENT = ev.NO_EVENT


@maybe_njit
def dispatch(cfg_i, cfg_f, hf, hi, st_i, st_f, qf, qi, service, t):
    """pool.dispatch (FIFO): free workers take queued requests, past those that waited too long
    (each dropped one is an event of its own at this instant)."""
    has_qt = cfg_i[C_HAS_QUEUE_TIMEOUT] != 0
    queue_timeout = cfg_f[G_QUEUE_TIMEOUT]
    queue_cap = qf.shape[0]
    while st_i[I_BUSY] < st_i[I_WORKERS] and st_i[I_QUEUED] > 0:
        started = False
        while st_i[I_QUEUED] > 0:  # pool.take
            head = st_i[I_Q_HEAD]
            arrived = qf[head]
            qc = qi[head, 0]
            qtok = qi[head, 1]
            st_i[I_Q_HEAD] = (head + 1) % queue_cap
            st_i[I_QUEUED] -= 1
            if st_i[I_QUEUED] == 0:
                st_f[F_LAST_EMPTY] = t
                st_i[I_Q_HEAD] = 0
            if has_qt and t - arrived > queue_timeout:
                push(hf, hi, st_i, t, H_DROP, qc, (qtok << _REASON_BITS) | _QUEUE_TIMEOUT)
            else:  # pool.start
                st_i[I_BUSY] += 1
                if cfg_i[C_DRAWS_SERVICE] != 0:
                    d = service[st_i[I_SERVICE_POS]]
                    st_i[I_SERVICE_POS] += 1
                else:
                    d = cfg_f[G_SERVICE]
                push(hf, hi, st_i, t + d * st_f[F_SLOWDOWN], H_SERVED, qc, qtok)
                started = True
                break
        if not started:
            return


@maybe_njit
def next_error(errors, st_i):
    """The next uniform of the incidents' stream (one per attempt while an error rate is set)."""
    u = errors[st_i[I_ERROR_POS]]
    st_i[I_ERROR_POS] += 1
    return u


@maybe_njit
def backoff(cfg_i, cfg_f, bo, s, jitter, jitter_pos, c):
    """The slot's next delay (the plain strategy's ``delays`` generator, one step)."""
    kind = cfg_i[C_STRATEGY]
    if kind == S_CONSTANT:
        return cfg_f[G_BASE]
    if kind == S_NO_BACKOFF:
        return 0.0
    return doubling_delay(kind, cfg_f[G_CAP], bo, s, jitter, jitter_pos, c)


@maybe_njit
def run(cfg_i, cfg_f, st_i, st_f, hf, hi, qf, qi, df, di, waiting, tries, first, bo, free,
        attempts, series, lat_v, lat_c, lat_t, net, net_pos, jitter, jitter_pos, gaps, gap_pos,
        service, rec_t, rec_c, rec_p, outages, held, incidents_kind, incidents_level, errors,
        calls, rec_k):
    """Process events until the heap is empty (``DONE``) or Python must step in. ``calls``: each
    slot's call id, ``rec_k``: each recorded event's (``open_clients``' ``call_of``)."""
    queue_size = cfg_i[C_QUEUE_SIZE]
    has_timeout = cfg_i[C_HAS_TIMEOUT] != 0
    draws_service = cfg_i[C_DRAWS_SERVICE] != 0
    draws_errors = cfg_i[C_ERRORS] != 0
    uses_jitter = cfg_i[C_JITTER] != 0
    last_bucket = cfg_i[C_LAST_BUCKET]
    record = cfg_i[C_RECORD] != 0
    latency_sample = cfg_i[C_LATENCY_SAMPLE]
    timeout = cfg_f[G_TIMEOUT]
    constant = cfg_f[G_SERVICE]
    width = cfg_f[G_WIDTH]
    inv = cfg_f[G_INVERSE_WIDTH]
    heap_cap = hf.shape[0]
    queue_cap = qf.shape[0]
    due_cap = df.shape[0]
    net_have = st_i[I_NET_HAVE]
    jitter_have = st_i[I_JITTER_HAVE]
    gap_have = st_i[I_GAP_HAVE]
    service_have = st_i[I_SERVICE_HAVE]
    while st_i[I_HEAP] > 0:
        # Room and draws for the next event, checked before it is popped (see the docstring).
        queued = st_i[I_QUEUED]
        if (st_i[I_HEAP] + queued + st_i[I_HELD] + 4 > heap_cap or queued + 2 > queue_cap
                or st_i[I_DUE] + 2 > due_cap or st_i[I_TOKEN] + 2 > waiting.shape[0]
                or st_i[I_SLOTS] + 2 > tries.shape[0] or st_i[I_LATENCIES] + 2 > lat_v.shape[0]
                or st_i[I_HELD] + 2 > held.shape[0]
                or (record and st_i[I_RECORDED] + 2 > rec_t.shape[0])):
            return NEED_ROOM
        c = hi[0, 2]
        if c >= 0 and (net_pos[c] >= net_have or gap_pos[c] >= gap_have
                       or (uses_jitter and jitter_pos[c] >= jitter_have)):
            return NEED_DRAWS
        if draws_service and service_have - st_i[I_SERVICE_POS] < cfg_i[C_WORKERS]:
            return NEED_DRAWS  # an event may start every worker (a resume, a capacity regained)
        if draws_errors and st_i[I_ERROR_POS] >= st_i[I_ERROR_HAVE]:
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
            if handler == H_CALL:
                push(hf, hi, st_i, t + gaps[c, gap_pos[c]], H_CALL, c, 0)
                gap_pos[c] += 1
                if st_i[I_FREE] > 0:
                    st_i[I_FREE] -= 1
                    slot = free[st_i[I_FREE]]
                else:
                    slot = st_i[I_SLOTS]
                    st_i[I_SLOTS] = slot + 1
                    tries[slot] = 0
                    first[slot] = 0.0
                first[slot] = t
                calls[slot] = st_i[I_CALLS]
                st_i[I_CALLS] += 1
                series[R_OFFERED, int(t * inv)] += 1
                k = 1
            else:
                slot = a
                k = tries[slot] + 1
            tries[slot] = k
            tok = st_i[I_TOKEN]
            st_i[I_TOKEN] = tok + 1
            waiting[tok] = slot
            attempts[c] += 1
            if k > 1:
                series[R_RETRIES, int(t * inv)] += 1
            push(hf, hi, st_i, t + net[c, net_pos[c]], H_RECEIVE, c, tok)
            net_pos[c] += 1
            if has_timeout:
                n_due = st_i[I_DUE]
                if n_due == 0:
                    push(hf, hi, st_i, t + timeout, H_TIMEOUT, c, tok)
                j = (st_i[I_DUE_HEAD] + n_due) % due_cap
                df[j] = t + timeout
                di[j, 0] = c
                di[j, 1] = tok
                st_i[I_DUE] = n_due + 1
            p = _WRITE | ((k + 1) << _SHIFT)
            call = calls[slot]
        elif handler == H_RECEIVE:
            tok = a
            busy = st_i[I_BUSY]
            if st_i[I_PAUSED] != 0:  # OutageGate.wrap: held at the door until the resume
                n_held = st_i[I_HELD]
                held[n_held, 0] = c
                held[n_held, 1] = tok
                st_i[I_HELD] = n_held + 1
            elif st_f[F_ERROR_RATE] != 0.0 and next_error(errors, st_i) < st_f[F_ERROR_RATE]:
                # Incidents.wrap: an error reply (SERVER_ERROR), heard as a rejection
                series[R_REJECTED, int(t * inv)] += 1
                push(hf, hi, st_i, t + net[c, net_pos[c]], H_REJECTED, c, tok)
                net_pos[c] += 1
                p = _REJECTS
            elif busy < st_i[I_WORKERS]:
                busy += 1
                st_i[I_BUSY] = busy
                if draws_service:
                    d = service[st_i[I_SERVICE_POS]]
                    st_i[I_SERVICE_POS] += 1
                else:
                    d = constant
                push(hf, hi, st_i, t + d * st_f[F_SLOWDOWN], H_SERVED, c, tok)
                series[R_ACCEPTED, int(t * inv)] += 1
                p = _ACCEPTS | ((busy + 1) << _SHIFT)
            elif queue_size < 0 or queued < queue_size:
                if queued == 0:
                    st_f[F_LAST_EMPTY] = t
                j = (st_i[I_Q_HEAD] + queued) % queue_cap
                qf[j] = t
                qi[j, 0] = c
                qi[j, 1] = tok
                queued += 1
                st_i[I_QUEUED] = queued
                series[R_ACCEPTED, int(t * inv)] += 1
                p = _QUEUES | ((queued + 1) << _SHIFT)
            else:
                series[R_REJECTED, int(t * inv)] += 1
                push(hf, hi, st_i, t + net[c, net_pos[c]], H_REJECTED, c, tok)
                net_pos[c] += 1
                p = _REJECTS
        elif handler == H_SERVED:
            busy = st_i[I_BUSY] - 1
            st_i[I_BUSY] = busy
            push(hf, hi, st_i, t + net[c, net_pos[c]], H_SUCCEEDED, c, a)
            net_pos[c] += 1
            if st_i[I_QUEUED] > 0:
                dispatch(cfg_i, cfg_f, hf, hi, st_i, st_f, qf, qi, service, t)
            p = _COMPLETES | ((st_i[I_BUSY] + 1) << _SHIFT)  # after dispatch, as the reference's
        elif handler == H_DROP:
            reason = a & ((1 << _REASON_BITS) - 1)
            series[R_DROPS, int(t * inv)] += 1
            push(hf, hi, st_i, t + net[c, net_pos[c]], H_REJECTED, c, a >> _REASON_BITS)
            net_pos[c] += 1
            p = _DROPS | ((reason + 1) << _SHIFT)
        elif handler == H_SUCCEEDED or handler == H_REJECTED:
            slot = waiting[a]
            if slot < 0:
                st_i[I_LATE] += 1
            else:
                waiting[a] = -1
                call = calls[slot]
                if handler == H_SUCCEEDED:
                    st_i[I_SUCCESSES] += 1
                    keep_latency(lat_v, lat_c, lat_t, st_i, I_LATENCIES, I_STRIDE, I_SINCE_KEPT, t - first[slot], c, t,
                                 latency_sample)
                    series[R_GOODPUT, int(t * inv)] += 1
                    free[st_i[I_FREE]] = slot
                    st_i[I_FREE] += 1
                    p = _SUCCEEDS | ((tries[slot] + 1) << _SHIFT)
                else:
                    st_i[I_REJECTIONS] += 1
                    p = _after_failure(cfg_i, cfg_f, hf, hi, st_i, tries, first, bo, free, slot, jitter,
                                       jitter_pos, c, t)
        elif handler == H_TIMEOUT:
            st_i[I_DUE_HEAD] = (st_i[I_DUE_HEAD] + 1) % due_cap
            st_i[I_DUE] -= 1
            while st_i[I_DUE] > 0:
                head = st_i[I_DUE_HEAD]
                if waiting[di[head, 1]] >= 0:
                    push(hf, hi, st_i, df[head], H_TIMEOUT, di[head, 0], di[head, 1])
                    break
                st_i[I_DUE_HEAD] = (head + 1) % due_cap
                st_i[I_DUE] -= 1
            slot = waiting[a]
            if slot >= 0:
                waiting[a] = -1
                st_i[I_TIMEOUTS] += 1
                series[R_TIMED_OUT, int(t * inv)] += 1
                push(hf, hi, st_i, t, H_AFTER_FAILURE, c, (slot << _KIND_BITS) | _TIMED_OUT_KIND)
                p = _TIMES_OUT | ((tries[slot] + 1) << _SHIFT)
                call = calls[slot]
        elif handler == H_AFTER_FAILURE:
            p = _after_failure(cfg_i, cfg_f, hf, hi, st_i, tries, first, bo, free, a >> _KIND_BITS, jitter,
                               jitter_pos, c, t)
            call = calls[a >> _KIND_BITS]
        elif handler == H_SAMPLE:
            series[R_IN_SERVICE, a] = st_i[I_BUSY]
            series[R_QUEUED, a] = st_i[I_QUEUED]
            if a < last_bucket:
                push(hf, hi, st_i, (a + 2) * width, H_SAMPLE, -1, a + 1)
        elif handler == H_PAUSE:
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 1
            shift = outages[a, 1]
            moved = False
            for j in range(st_i[I_HEAP]):  # service waits out the pause (OutageGate.freeze)
                if hi[j, 1] == H_SERVED and hf[j] >= t:
                    hf[j] = hf[j] + shift
                    moved = True
            if moved:
                heapify(hf, hi, st_i[I_HEAP])
            if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0:
                p = _PAUSES
        elif handler == H_RESUME:
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 0
            if st_i[I_PENDING_WORKERS] >= 0:  # the incidents' resume hook, then the pool's
                st_i[I_WORKERS] = st_i[I_PENDING_WORKERS]
                st_i[I_PENDING_WORKERS] = -1
                dispatch(cfg_i, cfg_f, hf, hi, st_i, st_f, qf, qi, service, t)
            if st_i[I_QUEUED] > 0:
                dispatch(cfg_i, cfg_f, hf, hi, st_i, st_f, qf, qi, service, t)
            if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0:
                p = _RESUMES
            for j in range(st_i[I_HELD]):
                if cfg_i[C_DROP_ABANDONED] != 0 and waiting[held[j, 1]] < 0:
                    st_i[I_GATE_DROPPED] += 1
                else:
                    push(hf, hi, st_i, t, H_RECEIVE, held[j, 0], held[j, 1])
            st_i[I_HELD] = 0
        elif handler == H_INCIDENT_BEGINS or handler == H_INCIDENT_ENDS:
            kind = incidents_kind[a]
            level = incidents_level[a, 0] if handler == H_INCIDENT_BEGINS else incidents_level[a, 1]
            if kind == K_CAPACITY:  # the pool's set_workers, or at the resume if stopped now
                if st_i[I_PAUSED] != 0:
                    st_i[I_PENDING_WORKERS] = int(level)
                else:
                    st_i[I_WORKERS] = int(level)
                    dispatch(cfg_i, cfg_f, hf, hi, st_i, st_f, qf, qi, service, t)
            elif kind == K_SLOWDOWN:
                st_f[F_SLOWDOWN] = level
            else:
                st_f[F_ERROR_RATE] = level
            code = _INCIDENT_STARTS if handler == H_INCIDENT_BEGINS else _INCIDENT_ENDS
            p = code | ((kind + 1) << _SHIFT)
        else:  # H_END: the horizon; what is left never runs
            series[R_IN_SERVICE, last_bucket] = st_i[I_BUSY]
            series[R_QUEUED, last_bucket] = st_i[I_QUEUED]
            st_i[I_DROPPED_AT_END] = st_i[I_HEAP]
            st_i[I_HEAP] = 0
        note_event(st_i, st_f, I_SILENT, I_RECORDED, F_LAST, record, rec_t, rec_c, rec_p, rec_k, t, c, p, call,
                   _NO_EVENT)
    return DONE


@maybe_njit
def _after_failure(cfg_i, cfg_f, hf, hi, st_i, tries, first, bo, free, slot, jitter, jitter_pos, c, t):
    """open_clients.after_failure: the strategy's own limits first (``MaxAttempts``, then
    ``MaxElapsed``: the call gives up and its slot is free), else a fresh delay sequence at the
    call's first failure and the retry after the next delay."""
    k = tries[slot]
    max_attempts = cfg_i[C_MAX_ATTEMPTS]
    if ((max_attempts > 0 and k >= max_attempts)
            or (cfg_i[C_HAS_MAX_ELAPSED] != 0 and t - first[slot] > cfg_f[G_MAX_ELAPSED])):
        st_i[I_GAVE_UP] += 1
        free[st_i[I_FREE]] = slot
        st_i[I_FREE] += 1
        return _GIVES_UP | ((k + 1) << _SHIFT)
    if k == 1:
        bo[slot] = cfg_f[G_BASE]
    push(hf, hi, st_i, t + backoff(cfg_i, cfg_f, bo, slot, jitter, jitter_pos, c), H_SEND, c, slot)
    return _BACKS_OFF
