"""The engine's core: the event loop and run API (``engine``), event codes (``events``), seeded
streams (``streams``), what a run's models share (``wiring``), per-bucket counters (``series``),
recorded histories (``history``) and a config's cost estimate and run budget (``resources``).

Imports nothing itself, so importing one module of the core never pulls in the models."""
