"""Explore: sweep any scalar key of a simulation over one or two axes, and tune a strategy.

A ``[simulation.explore]`` table names axes by dotted paths into the validated spec
(``think_time``, ``outages[0].duration``, ``strategies[1].base``); every cell of the grid is a
full sweep of the simulation (strategies × repetitions) with that key changed. A
``[simulation.tune]`` table minimises a metric over a strategy's parameters. Modules, one job
each: ``paths`` (addressing), ``checks`` (re-validation), ``axes`` and ``plan`` (the config),
``summary`` and ``verdict`` (what a cell keeps), ``cache``, ``backends`` (process pool or Dask),
``runner``, ``table`` and ``figure`` (files), ``tune`` and ``pareto``, ``command`` (the CLI).

Nothing here imports Textual; heavy or optional libraries (matplotlib, dask, optuna) are
imported where they are used.
"""
