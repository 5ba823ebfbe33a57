"""Retry settings people already have (Envoy, Istio, gRPC service config, resilience4j, .NET
resilience, AWS SDKs), read into the presets and policies that exist here.

A settings file becomes one or more ``Layer``s: what one layer of a call path (the app, an SDK,
a sidecar) does to each call it passes on. ``backoff-sim check`` stacks the layers in the order
the calls pass through them; ``--explain`` prints the TOML they became.
"""

from sim.settings.imported.explain import explain, worst_case_attempts
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.read import KINDS, read_settings

__all__ = ["KINDS", "Knob", "Layer", "explain", "read_settings", "worst_case_attempts"]
