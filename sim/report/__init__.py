"""Rich renderables for the terminal: the metrics and history tables (``tables``), the latency
table of replying servers (``latency``)."""
