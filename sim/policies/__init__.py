"""Retry policies a client consults before each attempt and after each outcome: limits, budgets,
throttles, rate limiters and circuit breakers, each modelled on a real library.

``seam`` defines the protocol (links, chains, ``GiveUp``), ``chain`` builds a run's chains from a
strategy entry, ``entries`` reads a config's ``policies = [...]``, ``presets`` expands the retry
policies of real libraries by name. Each policy family is one module that registers itself in
``POLICIES``; importing this package imports them all. Policies build on the models' strategies;
the client model reaches them only through ``sim.vocabulary.outcomes.ChainFactory``."""

from __future__ import annotations

from sim.policies import (  # noqa: F401  # noqa: F401
           adaptive,
           circuit_breaker,
           concurrency_budget,
           grpc_throttle,
           limits,
           rate_limit,
           retry_budget,
           retry_on,
           retry_quota,
           token_bucket,
)
from sim.policies.chain import ChainSpec, chain_from_data, policy_from_dict, strategy_from_dict
from sim.policies.seam import POLICIES, Chain, GiveUp, Link, Policy, StrategyLink, register_policy

__all__ = ["POLICIES", "Chain", "ChainSpec", "GiveUp", "Link", "Policy", "StrategyLink",
           "chain_from_data", "policy_from_dict", "register_policy", "strategy_from_dict"]
