"""The kernels' event heap: ``heapq`` over arrays, items ordered by ``(time, seq)`` as the engine's
tuples are (the seq is unique, so no later field is ever compared).

An item is ``hf[i]`` (its time) and ``hi[i] = (seq, handler, client, arg)``; ``st_i[I_HEAP]``
holds the number of items and ``st_i[I_SEQ]`` the next seq, the first two slots of every
kernel's integer state.
"""

from __future__ import annotations

from sim.kernels.jit import maybe_njit

I_HEAP = 0  # items in the heap
I_SEQ = 1  # the next seq


@maybe_njit
def move(hf, hi, to, frm):
    """Copy the heap item at ``frm`` to ``to``."""
    hf[to] = hf[frm]
    hi[to, 0] = hi[frm, 0]
    hi[to, 1] = hi[frm, 1]
    hi[to, 2] = hi[frm, 2]
    hi[to, 3] = hi[frm, 3]


@maybe_njit
def put(hf, hi, i, t, s, handler, c, a):
    """Write the item ``(t, s, handler, c, a)`` at ``i``."""
    hf[i] = t
    hi[i, 0] = s
    hi[i, 1] = handler
    hi[i, 2] = c
    hi[i, 3] = a


@maybe_njit
def push_seq(hf, hi, st_i, t, s, handler, c, a):
    """heappush of ``(t, s, handler, c, a)`` with a seq taken earlier (a client's timeout that
    waited for its turn to enter the heap, ``sim.models.clients``)."""
    n = st_i[I_HEAP]
    st_i[I_HEAP] = n + 1
    while n > 0:  # sift up
        parent = (n - 1) >> 1
        pt = hf[parent]
        if t < pt or (t == pt and s < hi[parent, 0]):
            move(hf, hi, n, parent)
            n = parent
        else:
            break
    put(hf, hi, n, t, s, handler, c, a)


@maybe_njit
def push(hf, hi, st_i, t, handler, c, a):
    """heappush of ``(t, seq, handler, c, a)``; the item takes the next seq."""
    s = st_i[I_SEQ]
    st_i[I_SEQ] = s + 1
    push_seq(hf, hi, st_i, t, s, handler, c, a)


@maybe_njit
def sift_down(hf, hi, n, i):
    """Move the item at ``i`` down to its place among the first ``n`` (heapq's order: the
    smaller ``(time, seq)`` first)."""
    t = hf[i]
    s = hi[i, 0]
    h = hi[i, 1]
    c = hi[i, 2]
    a = hi[i, 3]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        right = child + 1
        if right < n and (hf[right] < hf[child] or (hf[right] == hf[child] and hi[right, 0] < hi[child, 0])):
            child = right
        ct = hf[child]
        if ct < t or (ct == t and hi[child, 0] < s):
            move(hf, hi, i, child)
            i = child
        else:
            break
    put(hf, hi, i, t, s, h, c, a)


@maybe_njit
def pop(hf, hi, st_i):
    """heappop: removes the first item (read it at index 0 before calling)."""
    n = st_i[I_HEAP] - 1
    st_i[I_HEAP] = n
    if n > 0:
        move(hf, hi, 0, n)
        sift_down(hf, hi, n, 0)


@maybe_njit
def heapify(hf, hi, n):
    """Restore the heap order of the first ``n`` items (after an outage moved some)."""
    for i in range(n // 2 - 1, -1, -1):
        sift_down(hf, hi, n, i)
