"""Corrupt explore cache entries are recomputed, never a crash, a hang or a memory hog (issue 40,
item 12): an entry is read as a regular file of at most ``MAX_ENTRY_BYTES``, and any failure to
read or parse it is a miss."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from test_explore_run import Spy, lock_doc, run

from sim.exploration import cache as cache_module
from sim.exploration.cache import CellCache
from sim.exploration.table import explore_csv_text


def deep_json(entry: Path) -> None:
    entry.write_text("[" * 200_000 + "]" * 200_000, "utf-8")  # json.loads: RecursionError


def fifo(entry: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)  # open() for reading would wait for a writer forever


def zeros(entry: Path) -> None:
    entry.unlink()
    entry.symlink_to("/dev/zero")  # read() would never end


def huge(entry: Path) -> None:
    with entry.open("a", encoding="utf-8") as f:  # a regular file beyond the bound
        f.write(" " * (cache_module.MAX_ENTRY_BYTES + 1))


@pytest.mark.parametrize("corrupt", [deep_json, fifo, zeros, huge], ids=["deep", "fifo", "dev-zero", "huge"])
def test_a_corrupt_entry_is_computed_again(tmp_path: Path, corrupt: Callable[[Path], None],
                                           monkeypatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 1 << 16)
    fresh = explore_csv_text(run(lock_doc([1.0])))
    run(lock_doc([1.0]), Spy(), CellCache(tmp_path))
    (entry,) = tmp_path.glob("*.json")
    stored = entry.read_text("utf-8")
    assert len(stored) < cache_module.MAX_ENTRY_BYTES  # a real entry fits the bound
    corrupt(entry)
    spy = Spy()
    assert explore_csv_text(run(lock_doc([1.0]), spy, CellCache(tmp_path))) == fresh
    assert len(spy.ran) == 1
    assert entry.is_file() and not entry.is_symlink() and entry.read_text("utf-8") == stored  # stored again
