"""The analysis pane: the strategies compared (``metrics_table`` or, for servers that reply,
``latency_table``, both laid out by ``strategy_table``), the sweep's metric chart and the run's
requests (``charts``, ``chart_stack``) or time series (``series_chart``, ``series_panels``)."""
