"""``backoff-sim check``: the retry settings a call path has (app, SDK, sidecar), checked.

Layers read from settings files (``sim.settings.imported``) are stacked in front of a service:
the app layer is the clients' strategy, every layer below it a pass-through tier with its own
retries and timeout. The check prints each layer's attempts and the worst-case amplification
(confirmed by a run under total failure), runs an incident battery against the stack and
against alternatives that differ in one setting, sweeps the main knob, and ends with a verdict.
"""
