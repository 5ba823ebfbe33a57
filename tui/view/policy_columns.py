"""The retry-policy columns both strategy tables add for a simulation with policies: their keys
(``sim.report.policies``, the CLI's policy table) and headers."""

from __future__ import annotations

from sim.report.policies import COLUMNS

POLICY_KEYS: tuple[str, ...] = tuple(key for key, _, _ in COLUMNS)
HEADERS = {"amplification": "Amplification", "retries denied": "Retries denied",
           "calls refused": "Calls refused", "breaker open": "Breaker open"}


def policy_header(key: str) -> str:
    return HEADERS[key]
