"""A fluid (mean-field) estimate of the replying servers' runs: a verdict per explore cell in
milliseconds instead of seconds of simulation (issue 22).

``express`` says whether a spec has a fluid form (and why not); ``delays`` turns a strategy
into per-attempt backoff distributions; ``model`` integrates the flows of many cells at once;
``verdict`` judges recovery from the fluid series as ``sim.analysis.recovery`` judges a run;
``cells`` runs an explore plan's cells. Nothing here imports Textual or the engine.
"""
