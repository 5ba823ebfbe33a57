"""How a repetition is named to a reader: counted from 1, as the app's status line ("rep 1 of
2") and ``backoff-sim --repetition`` count it. The CSV files' ``repetition`` column stays the
0-based index (data, as the reference writes it)."""

from __future__ import annotations


def repetition_text(index: int, count: int) -> str:
    """``repetition 1 of 2`` for the 0-based ``index`` of ``count`` repetitions."""
    return f"repetition {index + 1} of {max(count, index + 1)}"
