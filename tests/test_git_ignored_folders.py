"""Folders the tool names itself (the app's default export folder, the explore cache) get a
``.gitignore`` of ``*`` when the tool creates them, so a run inside a repository leaves ``git
status`` clean; a folder the user named (``--out results``) gets none, and an existing folder
is left as it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.export.atomic import GITIGNORE_TEXT, ensure_output_dir
from sim.exploration.cache import CellCache
from sim.exploration.summary import CellResult


def test_a_folder_created_git_ignored_ignores_everything_in_it(tmp_path: Path) -> None:
    folder = ensure_output_dir(tmp_path / "a" / "backoff-sim-out", git_ignored=True)
    assert (folder / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT
    assert GITIGNORE_TEXT.splitlines()[-1] == "*"
    assert not (tmp_path / "a" / ".gitignore").exists()  # only the folder itself


def test_a_folder_the_user_named_or_that_existed_gets_none(tmp_path: Path) -> None:
    assert not (ensure_output_dir(tmp_path / "results") / ".gitignore").exists()
    existing = tmp_path / "mine"
    existing.mkdir()
    assert not (ensure_output_dir(existing, git_ignored=True) / ".gitignore").exists()


def test_the_explore_cache_is_git_ignored(tmp_path: Path) -> None:
    import sim

    spec = sim.load(Path(__file__).parent / "fixtures" / "tiny.toml").simulations[0]
    result = CellResult(spec.labels, spec.clients[0], {"work": np.zeros((len(spec.labels), spec.repeat))})
    folder = tmp_path / "out" / ".backoff-sim-cache"
    CellCache(folder).put(spec, result)
    assert (folder / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT
    assert len(list(folder.glob("*.json"))) == 1
