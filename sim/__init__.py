"""backoff-sim's headless library: models, engine, analysis and export (never imports Textual)."""

from . import library_strategies  # noqa: F401  (registers the retry libraries' strategies in STRATEGIES)
