"""Counts as people read them: "1 client", "3 clients", "1 run each"."""

from __future__ import annotations


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural (an added "s") unless ``n`` is one."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
