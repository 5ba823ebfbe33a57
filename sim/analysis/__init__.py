"""What runs mean: per-run metrics, statistics with confidence intervals, the recovery verdict and
"vs best" comparisons. Running the runs (one, or a sweep over every core) is ``sim.runs``."""
