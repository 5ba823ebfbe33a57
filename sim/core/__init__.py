"""The event kernel the models build on: event codes (``events``), seeded streams (``streams``),
what a run's models share (``wiring``), per-bucket counters (``series``) and recorded histories
(``history``). The loop that runs them is ``sim.runs.engine``, a layer up, so the core imports
nothing of the models and the models import only the core."""
