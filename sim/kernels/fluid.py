"""The fluid model's step loop (``sim.fluid.model.Batch._run``) compiled: the same flows, case by
case (a case's numbers never depend on the others in its batch, except through the batch-wide
sizes the arrays are built with, which the kernel is given), step by step, with the same float
operations in the same order per case, so its numbers are the numpy loop's bits.

What numpy does that a scalar loop must copy to get the same bits:

- ``x.sum(axis=1)`` over a case's levels, and over its steps (the series' totals), is numpy's
  pairwise sum after its identity (``pairwise``: 8 partial sums in blocks of up to 128, halves
  beyond), over the batch's width of levels (zeros included);
- a sum over bins (``axis=0`` of bins × levels) adds row after row, except for one level, where
  it is again pairwise (numpy then reduces a contiguous run);
- ``np.exp`` of a float64 array is SVML's on AVX-512 machines, which differs from libm's
  ``exp`` by up to an ulp (measured: at most 1 ulp on 3.1 M arguments in [0, 700]). The latency
  it gives is only ever compared (the bins it completes, the outage it falls in), so the kernel
  decides with libm's value and checks that the same decision holds for every value within
  ``EXP_SLACK`` of it; if not (never seen), it stops and says so, and numpy runs the batch.

Arrays are the ``Batch``'s own (``sim.fluid.compiled`` packs them); the kernel writes the
per-bin and per-step arrays, the totals, and what ``Batch.series_of`` makes of them (the same
elementwise operations, each correctly rounded, so the same bits).
"""

from __future__ import annotations

import math

import numpy as np

from sim.kernels.jit import maybe_njit

NEGLIGIBLE = 1e-9  # as sim.fluid.model.NEGLIGIBLE
MAX_EXPONENT = 700.0  # as sim.fluid.model._MAX_EXPONENT
# SVML's exp is within 1 ulp (2.2e-16 relative) of libm's: 1e-14 is ~45 ulps of room.
EXP_SLACK = 1e-14
OK, AMBIGUOUS = 0, 1  # the kernel's status: its numbers are numpy's, or numpy must run the batch

# totals' columns (``T_*``), in sim.fluid.model's names
T_SUCCESSES, T_TIMEOUTS, T_REJECTIONS, T_GAVE_UP, T_DENIED = 0, 1, 2, 3, 4
TOTALS = ("successes", "timeouts", "rejections", "gave_up", "retries_denied")


@maybe_njit(inline=True)
def _block(a, start, n):
    """numpy's pairwise sum of ``a[start:start + n]`` for ``n <= 128``: one block."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[start + i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        p = start + i
        r0 += a[p]
        r1 += a[p + 1]
        r2 += a[p + 2]
        r3 += a[p + 3]
        r4 += a[p + 4]
        r5 += a[p + 5]
        r6 += a[p + 6]
        r7 += a[p + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@maybe_njit(inline=True)
def pairwise(a, start, n):
    """numpy's sum of ``a[start:start + n]`` bit for bit: its reduction's identity, +0.0, plus
    its pairwise sum (``DOUBLE_pairwise_sum``: blocks of up to 128, and beyond, the sum of two
    halves, the first a multiple of 8); the identity only turns a sum of -0.0s into +0.0, as
    numpy's. The halving is walked with a stack, not by recursion: numba's cache of a recursive
    function crashes the process that loads it."""
    if n <= 128:
        return 0.0 + _block(a, start, n)
    depth = 64  # halving 2^63 elements stops within 64 levels
    s_start = np.empty(depth, dtype=np.int64)
    s_n = np.empty(depth, dtype=np.int64)
    s_phase = np.empty(depth, dtype=np.int64)
    values = np.empty(depth + 1)
    sp, vp = 1, 0
    s_start[0], s_n[0], s_phase[0] = start, n, 0
    while sp > 0:
        at, m, phase = s_start[sp - 1], s_n[sp - 1], s_phase[sp - 1]
        if m <= 128:
            sp -= 1
            values[vp] = _block(a, at, m)
            vp += 1
            continue
        half = m // 2
        half -= half % 8
        if phase == 0:  # the first half
            s_phase[sp - 1] = 1
            s_start[sp], s_n[sp], s_phase[sp] = at, half, 0
            sp += 1
        elif phase == 1:  # the second half
            s_phase[sp - 1] = 2
            s_start[sp], s_n[sp], s_phase[sp] = at + half, m - half, 0
            sp += 1
        else:  # both done: their sum, in that order
            sp -= 1
            vp -= 1
            values[vp - 1] = values[vp - 1] + values[vp]
    return 0.0 + values[0]


@maybe_njit(inline=True)
def _fail(i, n, mass, extra, levels, give_up, tmp, closed, state, totals, budget, reserve, share, win,
          withdraw_step, budget_at, orbit, base, ring, lv, first, last, p_source, p_weight, p_offset, p_level):
    """``Batch.fail`` for case ``i``: failures ``mass`` heard at step ``n`` (+ ``extra``). The
    case's own values come as numbers (``closed`` its ``closed_f``, ``budget`` its
    ``has_budget``, ``budget_at`` its ``budget_now``, its orbit's ``base``, ``ring`` and
    ``lv`` levels and its points ``first`` to ``last``): numba counts a reference to every array
    a call passes, even inlined, which cost this loop more than its arithmetic."""
    for k in range(levels):
        tmp[k] = mass[k] * give_up[i, k]
    quit_ = pairwise(tmp, 0, levels)
    every = pairwise(mass, 0, levels)
    if budget:
        wanted = every - quit_
        balance = reserve + share * win[i, 0] - win[i, 1]
        allowed = min(max(balance, 0.0), wanted)
        withdraw_step[budget_at + n] += allowed
        win[i, 1] += allowed
        ratio = allowed / wanted if wanted > 0 else 1.0
        refused = wanted - allowed
        state[i, 0] += (quit_ + refused) * closed
        totals[i, T_GAVE_UP] += quit_ + refused
        totals[i, T_DENIED] += refused
        for k in range(levels):
            tmp[k] = mass[k] * ratio
        total = pairwise(tmp, 0, levels)
    else:
        state[i, 0] += quit_ * closed
        totals[i, T_GAVE_UP] += quit_
        for k in range(levels):
            tmp[k] = mass[k]
        total = every
    if not total > NEGLIGIBLE:  # a trace of a client: back to thinking
        state[i, 0] += total * closed
        return
    for p in range(first, last):
        slot = base + ((extra + n + 1 + p_offset[p]) % ring) * lv + p_level[p]
        orbit[slot] += tmp[p_source[p]] * p_weight[p]


@maybe_njit
def _series(i, steps, h, latency, net, service, slowdown, sent, calls, aged, success, middle,
            first, retried, first_latency, retried_latency, sums):
    """``Batch.series_of`` for case ``i``, element by element with numpy's operations (its
    ``np.where`` and ``np.maximum``, NaN kept as they keep it), and its row sums (pairwise)."""
    sums[i, 0] = pairwise(sent[i], 0, steps + 1)
    sums[i, 1] = pairwise(calls[i], 0, steps + 1)
    net2 = 2 * net[i]
    for n in range(steps):
        mid = middle[i, n]
        s, c = sent[i, mid], calls[i, mid]
        share = c / s if s > 0 else 1.0
        d = s - c
        if not (d >= 1e-300 or d != d):  # np.maximum(d, 1e-300)
            d = 1e-300
        age = aged[i, mid] / d
        attempt = (n + 1) * h - (mid + 0.5) * h + net2
        if not latency:  # no request is served faster than its service time
            floor = service[i] * slowdown[i, n] + net2
            if not (attempt >= floor or attempt != attempt):
                attempt = floor
        good = success[i, n]
        one, again = good * share, good * (1.0 - share)
        first[i, n], retried[i, n] = one, again
        first_latency[i, n] = attempt if one > 0 else np.nan
        retried_latency[i, n] = attempt + age if again > 1e-12 else np.nan


@maybe_njit
def run(latency, h, steps, levels, ring, resume_step, closed_f, open_calls, call_share, timeout,
        live_base, reject_off, serve, base, growth, limit_cap, slots_cap, queue, service, threshold,
        slowdown, stopped, capacity, slots, hs, he, stop_end, stops, give_up, elapsed,
        has_budget, reserve, share, success_f, deposit_step, withdraw_step, budget_now, window,
        orbit, o_base, o_ring, o_levels, p_start, p_end, p_source, p_weight, p_offset, p_level,
        mix, admitted, sent, rejected, calls, aged, success, middle, state, totals, win,
        net, first, retried, first_latency, retried_latency, sums):
    """Every case's steps (``Batch._run``), then its ``series_of`` (``first`` ..., ``sums``:
    work and offered); ``state[i]`` is (thinking, done, front). Returns ``OK``, or
    ``AMBIGUOUS`` when numpy's exp could have decided otherwise."""
    b = closed_f.size
    due = np.zeros(levels)
    tmp = np.zeros(levels)
    mass = np.zeros(levels)
    hi_slack, lo_slack = 1.0 + EXP_SLACK, 1.0 - EXP_SLACK
    for i in range(b):
        for n in range(steps):
            run_now = not stopped[i, n]
            # --- resume: outages ending now (their held bins admitted, a slot queue permitting)
            for j in range(stops):
                lo, hi = hs[i, j], he[i, j]
                if not (lo < hi and hi == n):
                    continue
                m = hi - lo
                awaited = np.empty(m)
                live = np.empty(m, dtype=np.bool_)
                for q in range(m):
                    live[q] = (lo + q + 0.5) * h + timeout[i] > stop_end[i, j]
                    held = sent[i, lo + q]
                    awaited[q] = held if serve[i] or live[q] else 0.0
                if not latency:
                    room = max(0.0, slots[i] * capacity[i, n] + queue[i] - (admitted[i, lo] - state[i, 1]))
                    took = np.empty(m)
                    refused = np.empty(m)
                    cs, before, anyr = 0.0, 0.0, False
                    for q in range(m):
                        cs += awaited[q]
                        now = min(cs, room)
                        took[q] = now - before
                        before = now
                        refused[q] = awaited[q] - took[q] if live[q] else 0.0
                        if refused[q] != 0.0:
                            anyr = True
                    if anyr:
                        for q in range(m):
                            rejected[i, lo + q] += refused[q]
                        totals[i, T_REJECTIONS] += pairwise(refused, 0, m)
                        if levels == 1:  # one level: numpy sums the bins pairwise
                            prod = np.empty(m)
                            for q in range(m):
                                prod[q] = refused[q] * mix[i, (lo + q) % ring, 0]
                            mass[0] = pairwise(prod, 0, m)
                        else:
                            for k in range(levels):
                                mass[k] = refused[0] * mix[i, lo % ring, k]
                            for q in range(1, m):
                                r = (lo + q) % ring
                                for k in range(levels):
                                    mass[k] = mass[k] + refused[q] * mix[i, r, k]
                        _fail(i, n, mass, reject_off[i], levels, give_up, tmp, closed_f[i], state, totals,
                              has_budget[i], reserve[i], share[i], win, withdraw_step, budget_now[i], orbit,
                              o_base[i], o_ring[i], o_levels[i], p_start[i], p_end[i], p_source, p_weight,
                              p_offset, p_level)
                    for q in range(m):
                        awaited[q] = took[q]
                start, cs = admitted[i, lo], 0.0
                for q in range(m):
                    cs += awaited[q]
                    admitted[i, lo + 1 + q] = start + cs
            # --- send: new calls and the retries due form bin n
            c = state[i, 0] * call_share[i, n] + open_calls[i]
            state[i, 0] -= c * closed_f[i]
            obase = o_base[i] + (n % o_ring[i]) * o_levels[i]
            for k in range(levels):
                if k < o_levels[i]:
                    due[k] = orbit[obase + k]
                    orbit[obase + k] = 0.0
                else:
                    due[k] = 0.0
            due[0] += c
            total = pairwise(due, 0, levels)
            r = n % ring
            div = total if total > 0 else 1.0
            for k in range(levels):
                mix[i, r, k] = due[k] / div
                tmp[k] = due[k] * elapsed[i, k]
            calls[i, n] = c
            aged[i, n] = pairwise(tmp, 0, levels)
            sent[i, n] = total
            if has_budget[i]:
                old = budget_now[i] - window[i] + n
                win[i, 0] -= deposit_step[old]
                win[i, 1] -= withdraw_step[old]
                dep = c * (1.0 - success_f[i])
                deposit_step[budget_now[i] + n] += dep
                win[i, 0] += dep
            # --- admit: bin n enters the server (held while stopped); a full slot server rejects
            refused_n = 0.0
            if latency:
                take = total if run_now else 0.0
            else:
                room = max(0.0, slots_cap[i, n] + queue[i] - (admitted[i, n] - state[i, 1]))
                if run_now:
                    take = min(total, room)
                    refused_n = total - take
                else:
                    take, refused_n = 0.0, 0.0
                if refused_n != 0.0:
                    rejected[i, n] = refused_n
                    totals[i, T_REJECTIONS] += refused_n
                    for k in range(levels):
                        mass[k] = refused_n * mix[i, r, k]
                    _fail(i, n, mass, reject_off[i], levels, give_up, tmp, closed_f[i], state, totals,
                          has_budget[i], reserve[i], share[i], win, withdraw_step, budget_now[i], orbit,
                          o_base[i], o_ring[i], o_levels[i], p_start[i], p_end[i], p_source, p_weight,
                          p_offset, p_level)
            admitted[i, n + 1] = admitted[i, n] + take
            old_done, old_front = state[i, 1], int(state[i, 2])
            front = old_front
            # --- complete: the server's work of step n
            if latency:
                end = (n + 1) * h
                for pas in range(2):
                    if pas == 0:  # the resume's own sweep first, before the held requests come in
                        if not resume_step[n]:
                            continue
                        resuming, top = False, np.inf
                        for j in range(stops):
                            if he[i, j] == n:
                                resuming = True
                                top = min(top, admitted[i, min(hs[i, j], n + 1)])
                        if not resuming:
                            top = admitted[i, n + 1]
                        active = run_now and resuming
                    else:
                        top, active = admitted[i, n + 1], run_now
                    if not active:  # its front stays; its completed work is read again
                        state[i, 1] = admitted[i, front]
                        continue
                    cc = max(top - state[i, 1], 0.0)
                    above = max(cc - limit_cap[i, n], 0.0)
                    x = min(above * growth[i], MAX_EXPONENT)
                    # The bins a check at ``end`` completes with latency base·e^x·slowdown
                    # (``complete_latency``), by libm's exp, and within EXP_SLACK of it either
                    # side, which must complete the same bins (exp(0) is 1 in every library).
                    e = 1.0 if x == 0.0 else math.exp(x)
                    count = 0
                    for side in range(1 if x == 0.0 else 3):
                        f = e if side == 0 else (e * lo_slack if side == 1 else e * hi_slack)
                        cut = end - base[i] * f * slowdown[i, n]
                        c = np.ceil(cut / h - 0.5)  # bins with (i + .5)h < cut, within [0, n + 1]
                        if c < 0.0:
                            c = 0.0
                        if c > n + 1:
                            c = float(n + 1)
                        got = int(c)
                        for j in range(stops):  # held bins were admitted at their resume, not when sent
                            if cut <= stop_end[i, j] and got > hs[i, j]:
                                got = min(got, hs[i, j])
                        if side == 0:
                            count = got
                        elif got != count:
                            return AMBIGUOUS
                    front = max(front, count)
                    state[i, 1] = admitted[i, front]
            else:
                work = admitted[i, n + 1] - state[i, 1]
                busy = min(work, slots_cap[i, n])
                factor = threshold[i] / max(work, 1e-300) if threshold[i] > 0 and work > threshold[i] else 1.0
                moved = min(work, busy * h / (service[i] * slowdown[i, n]) * factor)
                if run_now:
                    state[i, 1] = state[i, 1] + moved
                while front <= n and admitted[i, front + 1] <= state[i, 1] + 1e-12:
                    front += 1
            state[i, 2] = front
            done = state[i, 1]
            # --- settle: successes within their deadline, and the bin whose deadline fell now
            live_from = min(max(live_base[i] + (n + 1), 0), n + 1)
            good = max(0.0, done - max(old_done, admitted[i, live_from]))
            if good > 0.0:
                lo = max(old_front, live_from)
                success[i, n] = good
                middle[i, n] = (lo + max(front, lo + 1) - 1) // 2
                totals[i, T_SUCCESSES] += good
                state[i, 0] += good * closed_f[i]
                if has_budget[i]:
                    dep = good * success_f[i]
                    deposit_step[budget_now[i] + n] += dep
                    win[i, 0] += dep
            j = min(max(live_base[i] + n, 0), n + 1)
            if j < live_from:
                span = admitted[i, j + 1] - admitted[i, j]
                completed = min(max(done - admitted[i, j], 0.0), span)
                waiting = max(sent[i, j] - rejected[i, j] - completed, 0.0)
                if waiting > NEGLIGIBLE:
                    totals[i, T_TIMEOUTS] += waiting
                    rj = j % ring
                    for k in range(levels):
                        mass[k] = waiting * mix[i, rj, k]
                    _fail(i, n, mass, 0, levels, give_up, tmp, closed_f[i], state, totals,
                          has_budget[i], reserve[i], share[i], win, withdraw_step, budget_now[i], orbit,
                          o_base[i], o_ring[i], o_levels[i], p_start[i], p_end[i], p_source, p_weight,
                          p_offset, p_level)
                else:
                    state[i, 0] += waiting * closed_f[i]
        _series(i, steps, h, latency, net, service, slowdown, sent, calls, aged, success, middle,
                first, retried, first_latency, retried_latency, sums)
    return OK
