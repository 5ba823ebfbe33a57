"""Running simulations: one seeded run (``engine``), what a config will cost before any work
(``resources``), and sweeps of every (strategy, client count, repetition) on worker processes
(``sweep``, ``workers``, ``procpool``) that never outlive the process that started them.

It assembles the models, policies and analysis below it; nothing below imports a run."""
