"""The event kernel: event codes and their packing (``events``), seeded random streams
(``streams``), what a run's models share (``wiring``: the heap, the streams, the entry points
models set), the per-bucket counters handlers fill (``series``) and recorded histories
(``history``). It imports nothing else of ``sim``: the models build on it, ``sim.runs.engine``
drives it."""
