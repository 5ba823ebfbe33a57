"""Running simulations: one seeded run (``engine``), what a run will cost before it starts
(``resources``), and many runs on a process pool (``sweep``, ``workers``).

This layer sits above the models, policies and analysis it assembles, so ``sim/core`` stays the
event kernel that the models build on and nothing below imports a run."""
