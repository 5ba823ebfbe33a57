"""What runs mean: per-run metrics, statistics with confidence intervals, the recovery verdict,
"vs best" comparisons, and sweeps over every core (``sweep``, with its ``workers``)."""
