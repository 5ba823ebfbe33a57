"""The command palette's provider: every action of the key table, searchable by description."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .keys import KEYS


class BackoffCommands(Provider):
    """Offers each action with its key, so the palette also teaches the keys."""

    async def discover(self) -> Hits:
        for key in KEYS:
            yield DiscoveryHit(key.description, partial(self.app.run_action, key.action),
                               help=f"key: {key.key_names}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for key in KEYS:
            score = matcher.match(key.description)
            if score > 0:
                yield Hit(score, matcher.highlight(key.description),
                          partial(self.app.run_action, key.action), text=key.description,
                          help=f"key: {key.key_names}")
