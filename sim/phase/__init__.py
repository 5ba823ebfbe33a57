"""Phase portraits: the drift of a replying server's state (work, retry orbit) and, per cell of
a grid over that plane, the probability of returning to the healthy state (``backoff-sim phase``)."""
