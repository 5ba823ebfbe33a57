"""What every kernel keeps of a run as it goes: the latency sample and the recorded events, as
the reference's clients and ``Run`` keep them. A kernel passes the indices of its own integer
state (``st_i``) where these keep their counters."""

from __future__ import annotations

from sim.kernels.jit import maybe_njit


@maybe_njit
def keep_latency(lat_v, lat_c, lat_t, st_i, i_count, i_stride, i_since, latency, c, t, sample):
    """``sim.core.latency_sample.LatencySample.keep`` (the one rule), over the kernel's arrays:
    one latency in ``stride`` kept; past ``sample`` of them, every other one dropped and the
    stride doubled."""
    since = st_i[i_since] + 1
    if since >= st_i[i_stride]:
        since = 0
        n_lat = st_i[i_count]
        lat_v[n_lat] = latency
        lat_c[n_lat] = c
        lat_t[n_lat] = t
        n_lat += 1
        if n_lat > sample:  # keep the even ones
            kept = 0
            for i in range(0, n_lat, 2):
                lat_v[kept] = lat_v[i]
                lat_c[kept] = lat_c[i]
                lat_t[kept] = lat_t[i]
                kept += 1
            n_lat = kept
            st_i[i_stride] *= 2
        st_i[i_count] = n_lat
    st_i[i_since] = since


@maybe_njit
def note_event(st_i, st_f, i_silent, i_recorded, f_last, record, rec_t, rec_c, rec_p, rec_k, t, c, p, call,
               no_event):
    """An item handled: silent (``NO_EVENT``, counted), or an event at ``t`` (the last one's
    time kept) appended to the history when the run records one, with its ``call`` (-1: none,
    ``History.calls``)."""
    if p == no_event:
        st_i[i_silent] += 1
        return
    st_f[f_last] = t
    if record:
        r = st_i[i_recorded]
        rec_t[r] = t
        rec_c[r] = c
        rec_p[r] = p
        rec_k[r] = call
        st_i[i_recorded] = r + 1
