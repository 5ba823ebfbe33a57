"""The app's widgets, grouped by the pane they fill: ``replay/`` (timeline and event log),
``analysis/`` (strategy tables and charts); ``status`` (the status line) and ``map_grid`` (the
explore map) on their own. Widgets lay out and draw: what they show comes from ``tui.view`` and
``tui.state``, and they reach ``sim`` only through its public API and ``sim.core.events``."""
