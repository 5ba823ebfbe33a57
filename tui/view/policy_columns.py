"""The retry-policy columns both strategy tables add for a simulation with policies: their keys
and cells (``sim.report.policies``, the CLI's policy table: ``policy_rows``) and headers."""

from __future__ import annotations

from sim.report.policies import COLUMNS, policy_rows

__all__ = ["HEADERS", "POLICY_KEYS", "POLICY_METRICS", "policy_header", "policy_rows"]

POLICY_KEYS: tuple[str, ...] = tuple(key for key, _, _ in COLUMNS)
POLICY_METRICS: dict[str, str] = {key: metric for key, _, metric in COLUMNS}  # SweepResult's
HEADERS = {"amplification": "Amplification", "retries denied": "Retries denied",
           "calls refused": "Calls refused", "breaker open": "Breaker open"}


def policy_header(key: str) -> str:
    return HEADERS[key]
