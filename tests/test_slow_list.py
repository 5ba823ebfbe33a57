"""The list of tests moved to ``-m slow`` for the default run's budget (tests/conftest.py) names
tests that exist: a renamed test would otherwise quietly come back into the default run."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import SLOW_FOR_THE_BUDGET

HERE = Path(__file__).resolve().parent


def test_every_listed_test_exists() -> None:
    for node in SLOW_FOR_THE_BUDGET:
        file, _, rest = node.partition("::")
        name = re.sub(r"\[.*\]$", "", rest)
        assert f"def {name}(" in (HERE / file).read_text(encoding="utf-8"), node
