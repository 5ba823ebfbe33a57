"""Compiled fast paths: array-state transcriptions of the engine's models for one hot case.

The pure-Python engine (``sim.runs.engine``) stays the reference and the fallback; a kernel here
runs the same model over arrays with integer handler codes and the same numpy draws in the same
order, so its histories and CSVs are byte-identical. Each kernel is plain Python that numba
compiles when it is installed (``pip install backoff-sim[fast]``); without numba the same source
runs as it is (slowly, which the tests use to check it on any machine).
"""
