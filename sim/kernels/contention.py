"""Clients of a contention control, over arrays: ``sim.models.clients`` without replies (every
client makes one call at its start time, a burst or a spike; a strategy's delays after each
rejection or abort, until its own ``max_attempts`` or ``max_elapsed`` if it has them) against ``sim.models.controls``' LockingServer, WriteOnlyOCCServer,
ReadWriteOCCServer or ThrottlingServer: the sample's models, transcribed handler by handler.
A chain may hold one policy (``P_*``: Brooker's TokenBucket, gRPC's throttle, the AWS SDK's
retry quota, which keep ``tokens``, or Finagle's RetryBudget, ``sim.kernels.latency_closed``'s
transcription of it), per client or shared by all, asked where the chain's links are
(``sim.policies.seam``): before each attempt, after each failure, at each success.

As ``sim.kernels.latency_closed``: one heap of ``(time, seq)`` keys with integer handler codes
(``H_*``), per-client arrays for the clients' state; every push takes the next ``seq`` where the
reference's does when it keeps a history (``engine.Run``: no step taken ahead, ``Wiring.ahead``;
a run of metrics only takes the same events in the same order, ``engine.ahead_is_exact``), and
every draw reads the next value of the same stream (the network's and the jitter's per client,
the server's write durations), so a run is byte-identical to the reference's. ``run`` stops
between two events when it needs draws, room for the history or the guard (``NEED_DRAWS``,
``NEED_ROOM``, ``GUARD``); each client
has one item in the heap at a time, or held at the door while the server is stopped (and a
ThrottlingServer one per acceptance in its window, the outage gate its pauses and resumes), so
the heap and the held arrivals never need more room than they are built with. Outages stop the
server as ``sim.models.outage.OutageGate`` does: arrivals held until the resume, the server's
steps (a write's end, a commit, a window's expiry) moved later by the outage's length.
``sim.runs.fast_contention`` drives it.
"""

from __future__ import annotations

from sim.core import events as ev
from sim.kernels.delays import S_CONSTANT, S_NO_BACKOFF, doubling_delay
from sim.kernels.heap import I_HEAP, I_SEQ, heapify, pop, push
from sim.kernels.jit import maybe_njit
from sim.kernels.latency_closed import (C_BUDGET, C_BUDGET_AT_SUCCESS, C_BUDGET_DEPOSIT, C_BUDGET_EMPTY,  # noqa: F401
                                        C_BUDGET_HAS_CAP, C_BUDGET_RESERVE, C_BUDGET_SHARED, C_BUDGET_WINDOW,
                                        C_BUDGET_WITHDRAWAL, G_BUDGET_CAP, G_BUDGET_MS, budget_begin, budget_deposit,
                                        budget_withdraw)
from sim.kernels.outputs import note_event
from sim.kernels.pool_open import DONE, GUARD, NEED_DRAWS, NEED_ROOM

__all__ = ["DONE", "GUARD", "NEED_DRAWS", "NEED_ROOM", "run"]  # its statuses are pool_open's

# Handlers (the reference's function names).
H_CALL = 0  # clients.new_call (a fresh delay sequence), then sends
H_SEND = 1  # clients' ``sends``: ``read`` for read-then-write OCC, else ``write``
H_WRITE = 2  # clients.write after a version read (the control's ``client_version_reply``)
H_RECEIVE_WRITE = 3  # the control's receive_write
H_RECEIVE_READ = 4  # _OCCControl.receive_read
H_FREE = 5  # LockingServer's free
H_COMMIT = 6  # _OCCControl.maybe_commit (arg: the version the write is based on)
H_DECREMENT = 7  # ThrottlingServer's decrement
H_FAILURE = 8  # clients.after_failure (plain: the strategy's next delay)
H_PAUSE = 9  # outage.OutageGate._pause (arg: the outage's index)
H_RESUME = 10  # outage.OutageGate._resume

# Controls (``C_CONTROL``).
K_LOCKING = 0
K_WRITE_ONLY_OCC = 1
K_READ_WRITE_OCC = 2
K_THROTTLING = 3

# Integer configuration (``cfg_i``).
C_CONTROL = 0
C_STRATEGY = 1
C_JITTER = 2  # the strategy draws a uniform per delay
C_RECORD = 3
C_LIMIT = 4  # ThrottlingServer's limit
C_WRITES = 5  # the control draws write durations (all but ThrottlingServer)
C_MAX_ATTEMPTS = 6  # the strategy's max_attempts (0: none)
C_HAS_MAX_ELAPSED = 7
# 8 to 16: a RetryBudget's (``C_BUDGET_*``), at the indices ``sim.kernels.latency_closed`` gives
# them, whose transcription of the budget (``budget_begin``...) this kernel calls as it is.
C_POLICY = 17  # the chain's one policy (``P_*``), asked after the limits, before the strategy
C_POLICY_SHARED = 18  # its tokens shared by every client (scope = "shared"), else one each
C_REFILL_ON_SUCCESS = 19  # TokenBucket: refill_on = "success", else at each call's start
C_STRICT = 20  # TokenBucket: a retry needs more than its cost (else at least its cost)
C_RETRY_COST = 21  # RetryQuota: the cost of a retry after an abort
C_THROTTLE_COST = 22  # RetryQuota: after a rejection (throttle_cost, or retry_cost when unset)
C_REFUND = 23  # RetryQuota: success_refund
C_SIZE = 24
# Float configuration (``cfg_f``).
G_BASE = 0  # the strategy's base or constant
G_CAP = 1
G_WINDOW = 2  # ThrottlingServer's window
G_MAX_ELAPSED = 3  # the strategy's max_elapsed
G_TOKENS = 4  # the policy's tokens at the start: a bucket's capacity, a throttle's max_tokens, a quota's
G_REFILL = 5  # TokenBucket: refill; GrpcThrottle: token_ratio
G_COST = 6  # TokenBucket: cost
G_THRESHOLD = 7  # GrpcThrottle: max_tokens / 2
# 8 to 14 unused; 15 and 16 a RetryBudget's (``G_BUDGET_MS``, ``G_BUDGET_CAP``: latency_closed's).
G_SIZE = 17
assert C_HAS_MAX_ELAPSED < C_BUDGET and C_BUDGET_WITHDRAWAL < C_POLICY and G_THRESHOLD < G_BUDGET_MS < G_SIZE
# Integer state (``st_i``): the heap's first (``sim.kernels.heap``: I_HEAP = 0, I_SEQ = 1).
I_CHECK = 2  # the seq at which the guard wants to look
I_NET_HAVE = 3  # values held per client
I_JITTER_HAVE = 4
I_WRITE_POS = 5  # the server's next write duration
I_WRITE_HAVE = 6
I_BUSY = 7  # LockingServer: the lock is held (``available`` is False)
I_VERSION = 8  # OCC: the committed version
I_COUNT = 9  # ThrottlingServer: acceptances in the window
I_CALLS = 10  # calls started: the next call's id (``History.calls``)
I_SILENT = 11
I_RECORDED = 12
I_GAVE_UP = 13  # calls a limit ended (``counts["gave_up"]``)
I_DENIED = 14  # retries a policy denied (``PolicyEvents.retries_denied``)
I_PAUSED = 15  # the outage gate's state (sim.models.outage)
I_MARKERS = 16  # pause and resume items still in the heap
I_HELD = 17  # arrivals held while paused (``held``: handler, client, arg)
I_SIZE = 18
# Float state (``st_f``).
F_TIME = 0  # the last popped item's time
F_LAST = 1  # the last recorded event's time
F_SIZE = 2

_SHIFT = ev.DETAIL_SHIFT
_WRITE = ev.pack(ev.CLIENT_REQUESTS_WRITE)
_VERSION = ev.pack(ev.CLIENT_REQUESTS_VERSION)
_BACKS_OFF = ev.pack(ev.CLIENT_BACKS_OFF)
_GIVES_UP = ev.CLIENT_GIVES_UP  # with the attempt number as detail
_ACCEPTS = ev.pack(ev.SERVER_ACCEPTS)
_REJECTS = ev.pack(ev.SERVER_REJECTS)
_COMMITS = ev.pack(ev.SERVER_COMMITS)  # LockingServer's: no detail
_TENTATIVE = ev.pack(ev.SERVER_TENTATIVELY_WRITES)
_ABORTS = ev.pack(ev.SERVER_ABORTS)
_OCC_COMMITS = ev.SERVER_COMMITS  # with the version as detail
_REPORTS = ev.SERVER_REPORTS_VERSION
_COUNTED_ACCEPTS = ev.SERVER_ACCEPTS  # ThrottlingServer's: with the count as detail
_DECREMENTS = ev.SERVER_DECREMENTS
_NO_EVENT = ev.NO_EVENT
_PAUSES = ev.pack(ev.SERVER_PAUSES)
_RESUMES = ev.pack(ev.SERVER_RESUMES)

# Policies (``C_POLICY``): none, or the one policy of the chain.
P_NONE = 0
P_TOKEN_BUCKET = 1  # sim.policies.token_bucket
P_GRPC_THROTTLE = 2  # sim.policies.grpc_throttle
P_RETRY_QUOTA = 3  # sim.policies.retry_quota
P_RETRY_BUDGET = 4  # sim.policies.retry_budget (its numbers in the C_BUDGET_* slots)
# A denied retry's event, by policy (``PolicyEvents.denied``: the policy's reason as detail).
_TOKEN_BUCKET_DENIED = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["token_bucket"])
_GRPC_THROTTLE_DENIED = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["grpc_throttle"])
_RETRY_QUOTA_DENIED = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["retry_quota"])
_RETRY_BUDGET_DENIED = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["retry_budget"])
_BACKS_OFF_CODE = ev.CLIENT_BACKS_OFF  # with the tokens left as detail (``PolicyEvents.backs_off``)


@maybe_njit
def backoff(cfg_i, cfg_f, bo, jitter, jitter_pos, c):
    """Client c's next delay: one step of its strategy's ``delays`` generator, started afresh
    at the call's start (``bo[c]`` set to the base there)."""
    kind = cfg_i[C_STRATEGY]
    if kind == S_CONSTANT:
        return cfg_f[G_BASE]
    if kind == S_NO_BACKOFF:
        return 0.0
    return doubling_delay(kind, cfg_f[G_CAP], bo, c, jitter, jitter_pos, c)


@maybe_njit
def refill(cfg_f, tokens, b):
    """``refill`` tokens more, up to the capacity: TokenBucket's ``_add`` (``min``, whose value
    this is) and GrpcThrottle's ``on_success`` (its ``token_ratio`` up to ``max_tokens``)."""
    more = tokens[b] + cfg_f[G_REFILL]
    capacity = cfg_f[G_TOKENS]
    tokens[b] = capacity if more > capacity else more


@maybe_njit
def policy_failure(cfg_i, cfg_f, tokens, last, c, k, limited):
    """The policy's ``on_failure`` for client c's attempt number ``k`` (the chain asks it after
    the limits: ``limited``, one of them ended the call, which it hears all the same): whether it
    denies the retry."""
    policy = cfg_i[C_POLICY]
    b = 0 if cfg_i[C_POLICY_SHARED] != 0 else c
    if policy == P_TOKEN_BUCKET:  # _Bucket.on_failure
        if limited:
            return False
        held, cost = tokens[b], cfg_f[G_COST]
        if held > cost if cfg_i[C_STRICT] != 0 else held >= cost:
            tokens[b] = held - cost
            return False
        return True
    if policy == P_GRPC_THROTTLE:  # _ThrottleLink.on_failure: every failure reached the server
        held = tokens[b] - 1
        if held < 0:
            held = 0.0
        tokens[b] = held
        return held <= cfg_f[G_THRESHOLD] and not limited
    if policy == P_RETRY_QUOTA:  # _QuotaLink.on_failure
        # ``attempt == 1 or start != self.call``: a client makes one call, whose first failure
        # is attempt 1 (``self.call`` starts at -1, no call's start), so attempt 1 alone.
        if k == 1:
            last[c] = 0
        if limited:
            return False
        # The failure's kind is the control's: a rejection (lock, throttle) or an abort (OCC).
        control = cfg_i[C_CONTROL]
        cost = cfg_i[C_THROTTLE_COST] if control == K_LOCKING or control == K_THROTTLING else cfg_i[C_RETRY_COST]
        if cost > tokens[b]:  # _Quota.acquire
            return True
        tokens[b] -= cost
        last[c] = cost
    return False


@maybe_njit
def policy_success(cfg_i, cfg_f, tokens, last, b_buf, b_state, c, k, t):
    """The policy's ``on_success`` for client c's attempt number ``k`` (accepted or committed at t)."""
    policy = cfg_i[C_POLICY]
    b = 0 if cfg_i[C_POLICY_SHARED] != 0 else c
    if policy == P_RETRY_BUDGET:  # _OnSuccessBudgetLink.on_success: RequeueFilter's deposit
        if cfg_i[C_BUDGET_AT_SUCCESS] != 0:
            budget_deposit(cfg_i, cfg_f, b_buf, b_state, 0 if cfg_i[C_BUDGET_SHARED] != 0 else c, t)
    elif policy == P_GRPC_THROTTLE or (policy == P_TOKEN_BUCKET and cfg_i[C_REFILL_ON_SUCCESS] != 0):
        refill(cfg_f, tokens, b)
    elif policy == P_RETRY_QUOTA:
        # _QuotaLink.on_success: the refund after a call of one attempt, else what its last
        # retry acquired (attempt 1 failed first, noting this call: ``start == self.call``).
        amount = cfg_i[C_REFUND] if k == 1 else last[c]
        available, capacity = tokens[b], cfg_f[G_TOKENS]
        if available != capacity:  # _Quota.release
            room = capacity - available
            tokens[b] = available + (amount if amount < room else room)


@maybe_njit
def run(cfg_i, cfg_f, st_i, st_f, hf, hi, bo, attempts, call_of, first, tokens, last, net, net_pos, jitter, jitter_pos,
        writes, rec_t, rec_c, rec_p, rec_k, outages, held, b_buf, b_state, remaining):
    """Process events until the heap is empty (``DONE``) or Python must step in: room for the
    history (``NEED_ROOM``), draws (``NEED_DRAWS``: a client's network or jitter values, the
    server's write durations, each event reading at most one of each) or the guard (``GUARD``)."""
    control = cfg_i[C_CONTROL]
    jittered = cfg_i[C_JITTER] != 0
    draws_writes = cfg_i[C_WRITES] != 0
    record = cfg_i[C_RECORD] != 0
    limit = cfg_i[C_LIMIT]
    window = cfg_f[G_WINDOW]
    base = cfg_f[G_BASE]
    max_attempts = cfg_i[C_MAX_ATTEMPTS]
    has_max_elapsed = cfg_i[C_HAS_MAX_ELAPSED] != 0
    max_elapsed = cfg_f[G_MAX_ELAPSED]
    reads_version = control == K_READ_WRITE_OCC
    policy = cfg_i[C_POLICY]
    shared = cfg_i[C_POLICY_SHARED] != 0
    refill_at_start = policy == P_TOKEN_BUCKET and cfg_i[C_REFILL_ON_SUCCESS] == 0
    budget = policy == P_RETRY_BUDGET
    budget_shared = cfg_i[C_BUDGET_SHARED] != 0
    net_have = st_i[I_NET_HAVE]
    jitter_have = st_i[I_JITTER_HAVE]
    write_have = st_i[I_WRITE_HAVE]
    while st_i[I_HEAP] > 0:
        if record and st_i[I_RECORDED] + 2 > rec_t.shape[0]:
            return NEED_ROOM
        c = hi[0, 2]  # -1: the outage gate's pause or resume
        if ((c >= 0 and (net_pos[c] >= net_have or (jittered and jitter_pos[c] >= jitter_have)))
                or (draws_writes and st_i[I_WRITE_POS] >= write_have)):
            return NEED_DRAWS
        s = hi[0, 0]
        if s >= st_i[I_CHECK]:
            return GUARD
        t = hf[0]
        handler = hi[0, 1]
        a = hi[0, 3]
        pop(hf, hi, st_i)
        st_f[F_TIME] = t
        call = -1  # the event's call (a client's event of one)
        if handler == H_CALL:  # new_call: a fresh delay sequence, then sends
            call_of[c] = st_i[I_CALLS]
            st_i[I_CALLS] += 1
            first[c] = t
            bo[c] = base
            if refill_at_start:  # _RefillOnCallStart.on_attempt: attempt 1 of the call
                refill(cfg_f, tokens, 0 if shared else c)
            elif budget:  # _BudgetLink.on_attempt: attempt 1 begins the request
                budget_begin(cfg_i, cfg_f, b_buf, b_state, remaining, c, t)
            handler = H_SEND
        if st_i[I_PAUSED] != 0 and (handler == H_RECEIVE_WRITE or handler == H_RECEIVE_READ):
            # OutageGate.wrap: held at the door until the resume (an unbounded accept queue: one
            # message per client at most, ``held`` has a row for each)
            n_held = st_i[I_HELD]
            held[n_held, 0] = handler
            held[n_held, 1] = c
            held[n_held, 2] = a
            st_i[I_HELD] = n_held + 1
            p = _NO_EVENT
        elif handler == H_SEND or handler == H_WRITE:
            if handler == H_SEND and reads_version:  # read: the version first
                push(hf, hi, st_i, t + net[c, net_pos[c]], H_RECEIVE_READ, c, 0)
                p = _VERSION
            else:  # write (``a``: the version read, or 0)
                attempts[c] += 1
                push(hf, hi, st_i, t + net[c, net_pos[c]], H_RECEIVE_WRITE, c, a)
                p = _WRITE
            net_pos[c] += 1
            call = call_of[c]
        elif handler == H_FAILURE:
            # The chain's links in order (``ChainSpec.ordered``): max_attempts, max_elapsed (the
            # attempts so far are the writes sent: ``tries`` is ``attempts`` without replies),
            # the policy (which hears the failure even when a limit ended the call), then the
            # strategy's delay, drawn only for a retry.
            k = attempts[c]
            call = call_of[c]
            limited = (max_attempts > 0 and k >= max_attempts) or (has_max_elapsed and t - first[c] > max_elapsed)
            denied = False
            if budget:  # _BudgetLink.on_failure (its call begun at attempt 1: ``start == self.call``)
                if not limited:
                    if cfg_i[C_BUDGET_HAS_CAP] != 0 and remaining[c] <= 0:
                        limited = True  # REQUEST_LIMIT: a limit's give-up, not a denial
                    elif not budget_withdraw(cfg_i, cfg_f, b_buf, b_state, 0 if budget_shared else c, t):
                        denied = True
                    else:
                        remaining[c] -= 1
            elif policy != P_NONE:
                denied = policy_failure(cfg_i, cfg_f, tokens, last, c, k, limited)
            if limited:
                st_i[I_GAVE_UP] += 1
                p = _GIVES_UP | ((k + 1) << _SHIFT)
            elif denied:  # PolicyEvents.denied: the policy's reason
                st_i[I_GAVE_UP] += 1
                st_i[I_DENIED] += 1
                p = (_TOKEN_BUCKET_DENIED if policy == P_TOKEN_BUCKET else _GRPC_THROTTLE_DENIED
                     if policy == P_GRPC_THROTTLE else _RETRY_QUOTA_DENIED if policy == P_RETRY_QUOTA
                     else _RETRY_BUDGET_DENIED)
            else:
                delay = backoff(cfg_i, cfg_f, bo, jitter, jitter_pos, c)
                push(hf, hi, st_i, t + delay, H_SEND, c, 0)
                if policy == P_NONE or budget:  # a budget holds no tokens (``_token_reader``)
                    p = _BACKS_OFF
                else:  # PolicyEvents.backs_off: the whole tokens left
                    whole = int(tokens[0 if shared else c])
                    p = _BACKS_OFF_CODE | (((whole if whole > 0 else 0) + 1) << _SHIFT)
        elif handler == H_RECEIVE_WRITE:
            if control == K_LOCKING:
                if st_i[I_BUSY] == 0:
                    st_i[I_BUSY] = 1
                    duration = writes[st_i[I_WRITE_POS]]
                    st_i[I_WRITE_POS] += 1
                    push(hf, hi, st_i, t + duration, H_FREE, c, 0)
                    p = _ACCEPTS
                else:  # rejected: the failure reaches the client a network delay later
                    arrives = t + net[c, net_pos[c]]
                    net_pos[c] += 1
                    push(hf, hi, st_i, arrives, H_FAILURE, c, 0)
                    p = _REJECTS
            elif control == K_THROTTLING:
                count = st_i[I_COUNT]
                if count >= limit:
                    arrives = t + net[c, net_pos[c]]
                    net_pos[c] += 1
                    push(hf, hi, st_i, arrives, H_FAILURE, c, 0)
                    p = _REJECTS
                else:
                    count += 1
                    st_i[I_COUNT] = count
                    push(hf, hi, st_i, t + window, H_DECREMENT, c, 0)
                    if policy != P_NONE:  # committed: heard by the chain
                        policy_success(cfg_i, cfg_f, tokens, last, b_buf, b_state, c, attempts[c], t)
                    p = _COUNTED_ACCEPTS | ((count + 1) << _SHIFT)
            else:  # OCC: a tentative write, based on the version read or the current one
                based_on = a if reads_version else st_i[I_VERSION]
                duration = writes[st_i[I_WRITE_POS]]
                st_i[I_WRITE_POS] += 1
                push(hf, hi, st_i, t + duration, H_COMMIT, c, based_on)
                p = _TENTATIVE
        elif handler == H_RECEIVE_READ:  # the version reported, arriving a network delay later
            version = st_i[I_VERSION]
            arrives = t + net[c, net_pos[c]]
            net_pos[c] += 1
            push(hf, hi, st_i, arrives, H_WRITE, c, version)
            p = _REPORTS | ((version + 1) << _SHIFT)
        elif handler == H_COMMIT:
            if st_i[I_VERSION] != a:
                arrives = t + net[c, net_pos[c]]
                net_pos[c] += 1
                push(hf, hi, st_i, arrives, H_FAILURE, c, 0)
                p = _ABORTS
            else:
                version = st_i[I_VERSION] + 1
                st_i[I_VERSION] = version
                if policy != P_NONE:  # committed: heard by the chain
                    policy_success(cfg_i, cfg_f, tokens, last, b_buf, b_state, c, attempts[c], t)
                p = _OCC_COMMITS | ((version + 1) << _SHIFT)
        elif handler == H_FREE:
            st_i[I_BUSY] = 0
            if policy != P_NONE:  # committed: heard by the chain
                policy_success(cfg_i, cfg_f, tokens, last, b_buf, b_state, c, attempts[c], t)
            p = _COMMITS
        elif handler == H_PAUSE:
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 1
            shift = outages[a, 1]
            moved = False
            for j in range(st_i[I_HEAP]):  # the server's steps wait out the pause (OutageGate.freeze)
                frozen = hi[j, 1]
                if (frozen == H_FREE or frozen == H_COMMIT or frozen == H_DECREMENT) and hf[j] >= t:
                    hf[j] = hf[j] + shift
                    moved = True
            if moved:
                heapify(hf, hi, st_i[I_HEAP])
            p = _PAUSES if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0 else _NO_EVENT
        elif handler == H_RESUME:  # the held arrivals, in the order they came
            st_i[I_MARKERS] -= 1
            st_i[I_PAUSED] = 0
            p = _RESUMES if st_i[I_HEAP] > st_i[I_MARKERS] or st_i[I_HELD] > 0 else _NO_EVENT
            for j in range(st_i[I_HELD]):
                push(hf, hi, st_i, t, held[j, 0], held[j, 1], held[j, 2])
            st_i[I_HELD] = 0
        else:  # H_DECREMENT
            count = st_i[I_COUNT] - 1
            st_i[I_COUNT] = count
            p = _DECREMENTS | ((count + 1) << _SHIFT)
        note_event(st_i, st_f, I_SILENT, I_RECORDED, F_LAST, record, rec_t, rec_c, rec_p, rec_k, t, c, p, call,
                   _NO_EVENT)
    return DONE
