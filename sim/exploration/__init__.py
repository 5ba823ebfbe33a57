"""Explore and tune: sweep any scalar key of a simulation over one or two axes (a map), and
minimise a metric over a strategy's parameters (a tune).

A ``[simulation.explore]`` table names axes by dotted paths into the validated spec (``paths``:
``think_time``, ``outages[0].duration``, ``strategies[1].base``); every cell of the map is a full
sweep with that key changed, re-checked first (``checks``). The config: ``axes``, ``plan``,
``tune_plan``, ``tune_checks``; what a cell keeps: ``summary``, ``verdict``, ``grid``; running:
``cache``, ``backends`` (process pool or Dask), ``runner``, ``tune`` (Optuna); what is written and
printed: ``table``, ``figure``, ``front``, ``pareto``, ``report``; the command: ``command``.

Nothing here imports Textual; matplotlib, dask and optuna are imported where they are used."""
