"""Retry settings people already have (Envoy, Istio, gRPC service config, resilience4j, .NET
resilience, AWS SDKs), read into the presets and policies that exist here.

A settings file becomes a ``Layer``: what one layer of a call path (the app, an SDK, a sidecar)
does to each call it passes on. ``read_settings(path)`` returns it as a one-item list; a file
with several call paths (routes, methods, instances) is refused unless one is named
(``path#NAME``). ``backoff-sim check`` stacks the layers in the order the calls pass through
them; ``explain(layers)`` is the TOML they became, ``worst_case_attempts(layers)`` the product
of their attempts.
"""

from sim.settings.imported.explain import explain, worst_case_attempts
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.read import KINDS, read_settings

__all__ = ["KINDS", "Knob", "Layer", "explain", "read_settings", "worst_case_attempts"]
