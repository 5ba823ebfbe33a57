"""Atomic writes, file names, and exporting from threads (what the terminal app's export key does)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support import make_spec

from sim.runs.sweep import run_sweep
from sim.vocabulary.errors import UserError
from sim.export import export_all, export_simulation, spec_output_paths
from sim.export.atomic import atomic_write_bytes, atomic_write_text, ensure_output_dir
from sim.export.names import check_unique_stems, safe_title


def test_atomic_write_replaces_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "f.txt"
    atomic_write_text(path, "first\n")
    atomic_write_bytes(path, b"second\n")
    assert path.read_bytes() == b"second\n"
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]


def test_a_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path, monkeypatch) -> None:
    import sim.export.atomic as atomic

    path = tmp_path / "f.txt"
    atomic_write_text(path, "old\n")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
    with pytest.raises(UserError, match="No space left on device") as info:
        atomic_write_text(path, "new\n")
    assert str(path) in str(info.value)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_output_dir_errors_are_user_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot create it"):
        ensure_output_dir(blocker / "sub")
    with pytest.raises(UserError, match="not a directory"):
        ensure_output_dir(blocker)
    with pytest.raises(UserError, match="not a directory"):
        atomic_write_text(blocker / "x.csv", "a\n")
    assert ensure_output_dir(tmp_path / "a" / "b").is_dir()


@pytest.mark.parametrize(("title", "stem"), [("Locking_Example", "Locking_Example"),
                                             ("Read_Write_OCC_Example", "Read_Write_OCC_Example"),
                                             ("my sim/v2: fast", "my_sim_v2__fast"),
                                             ("café-1.5", "caf_-1.5")])
def test_safe_title(title: str, stem: str) -> None:
    assert safe_title(title) == stem


def test_titles_with_the_same_stem_are_refused() -> None:
    check_unique_stems(["a", "b"])
    with pytest.raises(UserError, match="'a b' and 'a_b'"):
        check_unique_stems(["a b", "a_b"])


def test_export_from_threads_matches_a_sequential_export(tmp_path: Path) -> None:
    specs = [make_spec("LockingServer", title=f"sim {i}", clients=[1, 3], repeat=2, seed=i)
             for i in range(2)]
    results = [run_sweep(spec, workers=1) for spec in specs]
    sequential = export_all(results, tmp_path / "seq")
    errors: list[BaseException] = []

    def export(result, out: Path) -> None:
        try:
            export_simulation(result, out)
        except BaseException as exc:  # surfaced below; a thread cannot fail the test directly
            errors.append(exc)

    threads = [threading.Thread(target=export, args=(r, tmp_path / f"thread{i}"))
               for i, r in enumerate(results)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, result in enumerate(results):
        for kind, path in spec_output_paths(result.spec, tmp_path / f"thread{i}").items():
            expected = tmp_path / "seq" / path.name
            assert expected in sequential
            assert path.read_bytes() == expected.read_bytes(), kind
