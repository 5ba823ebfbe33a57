"""``read_settings(path)``: which tool a settings file belongs to (by its content, or ``kind=``),
and the layer it becomes.

A file may hold several call paths (Envoy routes, gRPC methods, resilience4j instances, .NET
clients, AWS profiles); they are alternatives, not layers of one path, so one is chosen:
``file#NAME`` (or ``select=NAME``) names it, and a file with several and no name is refused with
the names listed. ``env:aws`` reads ``AWS_RETRY_MODE`` and ``AWS_MAX_ATTEMPTS`` from the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path as FilePath
from typing import Any

from sim.settings.imported import aws, dotnet, envoy, grpc, istio, resilience4j
from sim.policies.chain import strategy_from_dict
from sim.policies.entries import parse_entry
from sim.settings.imported.layer import Layer
from sim.settings.imported.source import Document, load_json, load_yaml, suggest
from sim.vocabulary.errors import ConfigError, ParamError
from sim.vocabulary.inputs import InputFileError, read_limited

KINDS = ("envoy", "istio", "grpc", "resilience4j", "dotnet", "aws")
MAX_BYTES = 16 * 2**20  # as a config file (sim.settings.config.MAX_CONFIG_BYTES)
ENVIRONMENT = "env:aws"
_INI_SECTION = re.compile(r"\[[^\]\n]+\]")
_ENVOY_KEYS = {"static_resources", "dynamic_resources", "virtual_hosts", "route_config", "retry_policy", "clusters",
               "circuit_breakers", "outlier_detection", "resources", "admin", "listeners"}
_GRPC_KEYS = {"methodConfig", "retryThrottling", "loadBalancingConfig", "loadBalancingPolicy", "healthCheckConfig"}


def read_settings(path: str | os.PathLike[str], kind: str | None = None, *, select: str | None = None,
                  order: str | None = None, profile: str | None = None,
                  environ: Mapping[str, str] | None = None) -> list[Layer]:
    """The layer a settings file becomes (a one-item list), or ConfigError: one line naming the
    file, the line and the key, and how to fix it.

    ``kind`` overrides the detection (one of ``KINDS``); ``select`` (or ``path#NAME``) picks one
    call path of several; ``order`` is resilience4j's decorator order (``"retry-outside"``, Spring
    Boot's default, or ``"retry-inside"``); ``profile`` an AWS profile; ``environ`` the
    environment whose AWS variables override an AWS config file (none unless given, so a file
    reads the same everywhere; ``env:aws`` reads ``os.environ`` when none is given).
    """
    name = os.fspath(path)
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"unknown settings kind {kind!r}", file=name,
                          hint=suggest(kind, KINDS) or f"choose one of {', '.join(KINDS)}")
    if order is not None and order not in resilience4j.ORDERS:
        raise ConfigError(f"unknown decorator order {order!r}", file=name,
                          hint=f"choose {' or '.join(resilience4j.ORDERS)}")
    if name == ENVIRONMENT:
        env = os.environ if environ is None else environ
        doc = Document("environment", {}, {(): 0})
        return _one(aws.read(doc, profile=profile or select, environ=env), "environment", None)
    if select is None and "#" in name and not FilePath(name).exists():
        name, select = name.rsplit("#", 1)
    text = _text(name)
    docs, syntax = _documents(text, name, kind)
    found = kind or _detect(docs, syntax, name)
    if order is not None and found != "resilience4j":
        raise ConfigError(f"order applies to resilience4j settings, not {found}", file=name,
                          hint="leave order out")
    if found == "aws":
        return _one(aws.read(docs[0], profile=profile or select, environ=environ), name, None)
    if profile is not None:
        raise ConfigError(f"profile applies to AWS config files, not {found}", file=name, hint="leave profile out")
    if found == "istio":
        layers = istio.read(docs)
    elif found == "resilience4j" and len([d for d in docs if isinstance(d.data, dict) and "resilience4j" in d.data]) == 1:
        # a Spring application.yml with profile documents: the one that sets resilience4j
        docs = [d for d in docs if isinstance(d.data, dict) and "resilience4j" in d.data]
        layers = resilience4j.read(docs[0], order=order)
    elif len(docs) != 1:
        raise ConfigError(f"holds {len(docs)} YAML documents that could each set {found} retries", file=name,
                          hint="keep the one in use, or split the file, one document each")
    elif found == "envoy":
        layers = envoy.read(docs[0])
    elif found == "grpc":
        layers = grpc.read(docs[0])
    elif found == "resilience4j":
        layers = resilience4j.read(docs[0], order=order)
    else:
        layers = dotnet.read(docs[0])
    if not layers:
        raise ConfigError(f"holds no {found} retry settings", file=name,
                          hint="is this the right file? give kind= if it is another tool's")
    return _one(layers, name, select)


def _labelled(layer: Layer) -> Layer:
    """The entry named by the call path and the tool (``inventory (envoy)``): the label of its
    rows, distinct from another layer's of the same path."""
    return replace(layer, entry={**layer.entry, "name": f"{layer.name} ({layer.kind})"})


def _checked(layer: Layer, name: str) -> Layer:
    """The entry as a config would read it (times in ms): a value the settings allow but the
    model refuses (an Envoy base_interval under a millisecond...) is one line here, not later."""
    entry, problems = parse_entry(layer.entry, 0.001)
    if entry is not None:
        try:
            strategy_from_dict({k: v for k, v in entry.strategy.items() if k != "name"})
        except ParamError as exc:
            problems = [ParamError(f"strategy.{exc.key}", exc.message, exc.hint)]
    if problems:
        p = problems[0]
        raise ConfigError(f"becomes a strategy entry backoff-sim refuses: {p.key}: {p.message}", file=name,
                          key=layer.name, hint=p.hint)
    return layer


def _one(layers: list[Layer], name: str, select: str | None) -> list[Layer]:
    layers = [_checked(_labelled(layer), name) for layer in layers]
    names = [layer.name for layer in layers]
    if select is not None:
        chosen = [layer for layer in layers if layer.name == select]
        if not chosen:
            raise ConfigError(f"has no call path named {select!r}", file=name,
                              hint=suggest(select, names) or f"its names are {', '.join(map(repr, names))}")
        return chosen[:1]
    if len(layers) > 1:
        raise ConfigError(f"holds {len(layers)} call paths ({', '.join(map(repr, names))}), alternatives "
                          "rather than layers of one path", file=name,
                          hint=f"name one, e.g. {name}#{names[0]}")
    return layers


def _text(name: str) -> str:
    try:
        raw = read_limited(name, MAX_BYTES, what="settings file")
    except FileNotFoundError:
        raise ConfigError("no such file", file=name, hint="give the path of a settings file, "
                          "e.g. examples/settings/envoy.yaml") from None
    except InputFileError as exc:
        raise ConfigError(exc.reason, file=name, hint=exc.hint) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text", file=name) from None


def _meaningful(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and line.strip()[0] not in "#;"]


def _documents(text: str, name: str, kind: str | None) -> tuple[list[Document], str]:
    """The file parsed by its syntax: JSON (needs nothing), INI (AWS) or YAML (PyYAML)."""
    lines = _meaningful(text)
    first = lines[0].strip() if lines else ""
    if kind == "aws" or (kind is None and _INI_SECTION.fullmatch(first) and
                         all(_INI_SECTION.fullmatch(l.strip()) or "=" in l or l[0] in " \t" for l in lines)):
        return [aws.parse_ini(text, name)], "ini"
    if first.startswith("{") or first.startswith("//") or first.startswith("/*"):
        return [load_json(text, name)], "json"
    if not lines:
        raise ConfigError("is empty", file=name, hint="give a settings file with retry settings")
    return load_yaml(text, name), "yaml"


def _detect(docs: list[Document], syntax: str, name: str) -> str:
    if syntax == "ini":
        return "aws"
    datas = [d.data for d in docs if isinstance(d.data, dict)]
    keys: set[Any] = set().union(*(set(d) for d in datas)) if datas else set()
    if "resilience4j" in keys:
        return "resilience4j"
    if any("istio.io" in str(d.get("apiVersion", "")) for d in datas):
        return "istio"
    if keys & _GRPC_KEYS:
        return "grpc"
    if any(dotnet.handler_sections(d, ()) for d in datas) and not keys & _ENVOY_KEYS:
        return "dotnet"
    if keys & _ENVOY_KEYS or keys & set(envoy.RETRY_KEYS):
        return "envoy"
    raise ConfigError("is not settings this tool knows (Envoy, Istio, gRPC service config, resilience4j, "
                      ".NET appsettings.json, AWS config)", file=name,
                      hint=f"give the kind, one of {', '.join(KINDS)}, if it is one of them")
