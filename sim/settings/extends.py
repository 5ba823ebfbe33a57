"""``extends = "Other_Title"``: a ``[[simulation]]`` that starts from another one's keys.

Comparing two defences used to mean copying a 25-line block to change one key. A block that
names another simulation of the same file in ``extends`` takes every key of that one (itself
resolved first, so extensions chain) and then its own keys, which replace the inherited ones
whole (a ``strategies`` given replaces the list, it does not add to it). Its ``title`` is its
own, and the sub-tables another module reads from a block (``[simulation.explore]``,
``[simulation.tune]``) stay with the block they are written in. This works on the raw TOML
tables, before validation, so every key is then checked as if it had been written out.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

EXTENDS_KEY = "extends"
# Keys that belong to the block they are written in and are never inherited.
NOT_INHERITED = frozenset({"title", EXTENDS_KEY, "explore", "tune"})


@dataclass(frozen=True)
class ExtendsError:
    """A mistake in one block's ``extends``: where (the block's title or ``#index``), what, and
    how to fix it."""

    where: str
    message: str
    hint: str | None = None


def _where(block: dict[str, Any], index: int) -> str:
    title = block.get("title")
    return title if isinstance(title, str) and title.strip() else f"#{index}"


def resolve_extends(blocks: list[dict[str, Any]]) -> tuple[list[dict[str, Any] | None], list[ExtendsError]]:
    """Each block with its inherited keys merged in (``extends`` removed), in the same order;
    None for a block whose ``extends`` is wrong (unknown title, a cycle, not a string), with
    one ``ExtendsError`` for each such mistake."""
    by_title: dict[str, int] = {}
    for i, block in enumerate(blocks):
        title = block.get("title")
        if isinstance(title, str):
            by_title.setdefault(title, i)
    resolved: dict[int, dict[str, Any] | None] = {}
    errors: list[ExtendsError] = []

    def resolve(i: int, chain: tuple[int, ...]) -> dict[str, Any] | None:
        if i in resolved:
            return resolved[i]
        block = blocks[i]
        if EXTENDS_KEY not in block:
            resolved[i] = dict(block)
            return resolved[i]
        where = _where(block, i + 1)
        parent = block[EXTENDS_KEY]
        result: dict[str, Any] | None = None
        if not isinstance(parent, str):
            errors.append(ExtendsError(where, f"extends must be a simulation's title (a string), "
                                              f"not {type(parent).__name__}",
                                       'write extends = "Other_Title"'))
        elif parent not in by_title:
            close = difflib.get_close_matches(parent, list(by_title), n=1)
            errors.append(ExtendsError(
                where, f"extends {parent!r}, but no simulation in this file has that title",
                f"did you mean {close[0]!r}?" if close else
                f"extend one of {', '.join(repr(t) for t in by_title) or 'the titled simulations'}"))
        elif by_title[parent] in chain + (i,):
            loop = [_where(blocks[j], j + 1) for j in chain + (i,)]
            start = loop.index(parent)
            cycle = " → ".join(loop[start:] + [parent])
            errors.append(ExtendsError(where, f"extends form a cycle: {cycle}",
                                       "one simulation of the cycle must give its keys itself"))
        else:
            base = resolve(by_title[parent], chain + (i,))
            if base is not None:
                result = {k: v for k, v in base.items() if k not in NOT_INHERITED}
                result.update({k: v for k, v in block.items() if k != EXTENDS_KEY})
        resolved[i] = result
        return result

    out = [resolve(i, ()) for i in range(len(blocks))]
    return out, errors
