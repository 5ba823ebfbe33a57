"""Retry settings people already have (Envoy, Istio, gRPC service config, resilience4j, .NET
resilience, AWS SDKs), read into the presets and policies that exist here.

A settings file becomes one or more ``Layer``s: what one layer of a call path (the app, an SDK,
a sidecar) does to each call it passes on. ``backoff-sim check`` stacks the layers in the order
the calls pass through them; ``--explain`` prints the TOML they became.
"""
