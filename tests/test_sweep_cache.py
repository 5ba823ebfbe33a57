"""Sweeps already done are not done again (issue 37): ``backoff-sim run`` and the app's data
source read a sweep back from the cache they share (``sim.exploration.cache.SweepCache``), keyed
by spec (seed included) and code version, with the same bytes in every file; ``--no-cache``
simulates; a corrupt or foreign entry is a miss, simulated again without a word; ``--events``
says what the events file holds."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from pathlib import Path

import pytest

import sim.runs.sweep
from sim.commands import cli
from sim.exploration import cache as cache_module
from sim.exploration.cache import SWEEP_SUFFIX, SweepCache, sweep_key
from sim.export.csv_files import read_events_csv
from sim.pipeline import load
from tui.state.source import ConfigSource

FIXTURES = Path(__file__).parent / "fixtures"
POOL = FIXTURES / "tiny_pool.toml"  # a replying server: series, latencies, recovery, example runs
TITLE = "Tiny_pool"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own (the suite runs with none, ``conftest``)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("BACKOFF_SIM_CACHE", str(directory))
    return directory


@pytest.fixture
def sweeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sweeps the engine runs (each call of ``run_sweeps`` appends its simulations)."""
    calls: list[int] = []
    real = sim.runs.sweep.run_sweeps

    def counted(specs, **kwargs):
        calls.append(len(specs))
        return real(specs, **kwargs)
    monkeypatch.setattr(sim.runs.sweep, "run_sweeps", counted)
    monkeypatch.setattr("tui.state.source.run_sweeps", counted)  # the app's, imported by name
    return calls


def run(config: Path, out: Path, capsys, *extra: str) -> str:
    assert cli.main(["run", str(config), "--out", str(out), "--workers", "1", *extra]) == 0
    return capsys.readouterr().out


def files(out: Path) -> dict[str, bytes]:
    """Every file of a run's set but its provenance (which names the command, --out included)."""
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())
            if p.is_file() and not p.name.endswith("_provenance.json")}


def test_a_second_run_reads_the_sweep_back_with_the_same_bytes(cache_dir, sweeps, tmp_path, capsys,
                                                                monkeypatch) -> None:
    first = run(POOL, tmp_path / "first", capsys)
    assert sweeps == [1] and "from the cache" not in first
    assert len(list(cache_dir.glob(f"*{SWEEP_SUFFIX}"))) == 1
    assert "from the cache" not in run(POOL, tmp_path / "fresh", capsys, "--no-cache")
    assert sweeps == [1, 1]  # --no-cache simulates, though the cache has the sweep

    def no_simulation(*args, **kwargs):
        raise AssertionError("the second run simulated")
    # Neither the sweep nor the example runs the files show are simulated again.
    monkeypatch.setattr(sim.runs.sweep, "run_sweeps", no_simulation)
    monkeypatch.setattr("sim.export.runs.record_run", no_simulation)
    second = run(POOL, tmp_path / "second", capsys)
    assert f"{TITLE.replace('_', ' ')} · results from the cache of " in second
    assert "--no-cache to simulate again" in second
    assert files(tmp_path / "first") == files(tmp_path / "second") == files(tmp_path / "fresh")
    assert any(name.endswith("_events.csv") for name in files(tmp_path / "first"))


def test_another_seed_config_or_version_misses(tmp_path, monkeypatch) -> None:
    from dataclasses import replace

    from sim.runs.sweep import run_sweep

    spec = load(POOL).simulations[0]
    cache = SweepCache(tmp_path)
    cache.put(run_sweep(spec, workers=1))
    assert cache.get(spec) is not None
    assert cache.get(load(POOL).with_seed(6).simulations[0]) is None  # another seed
    changed = POOL.read_text().replace("repeat = 2", "repeat = 3")
    assert cache.get(load(changed).simulations[0]) is None  # another config
    assert cache.get(replace(spec, timeout=spec.timeout * 2)) is None  # another key's value
    real_version = cache_module.code_version
    monkeypatch.setattr(cache_module, "code_version", lambda: "another version")
    assert cache.get(spec) is None  # the code changed
    monkeypatch.setattr(cache_module, "code_version", real_version)
    assert cache.get(spec) is not None
    # Where the config file is, and --force, are not what a sweep's numbers depend on.
    assert cache.get(replace(spec, source="elsewhere.toml", soft_limits=False)) is not None


def entry(cache_dir: Path) -> Path:
    (path,) = cache_dir.glob(f"*{SWEEP_SUFFIX}")
    return path


def signed(key: str, payload: bytes) -> bytes:
    """An entry whose checksum verifies (what an edited or planted file would carry)."""
    header = json.dumps({"format": 1, "created": 0.0,
                         "sha256": hashlib.sha256(key.encode() + b"\n" + payload).hexdigest()})
    return header.encode() + b"\n" + payload


class Planted:
    """A pickle that would run a function of the standard library when loaded."""

    def __reduce__(self):
        return (shutil.rmtree, ("/nonexistent-backoff-sim",))


# Two kinds of damage in the default run; the others take the same path (a miss, simulated
# again) and run with -m slow.
@pytest.mark.parametrize("damage", [pytest.param("garbage", marks=pytest.mark.slow), "truncated",
                                    pytest.param("checksum", marks=pytest.mark.slow), "foreign"])
def test_a_corrupt_entry_is_simulated_again_without_a_traceback(damage, cache_dir, sweeps, tmp_path,
                                                                capsys) -> None:
    source = ConfigSource(load(POOL), cache=SweepCache.default())
    source.sweep(TITLE.replace("_", " "), workers=1)  # the app's sweep fills the cache
    path = entry(cache_dir)
    data = path.read_bytes()
    key = sweep_key(load(POOL).simulations[0])
    damaged = {"garbage": b"\x00not an entry",
               "truncated": data[:len(data) // 2],
               "checksum": data[:-1] + bytes([data[-1] ^ 1]),  # one bit of the payload changed
               # Verifies, but names a function outside the simulator: never called.
               "foreign": signed(key, pickle.dumps(Planted()))}[damage]
    path.write_bytes(damaged)
    assert source.cached_sweep(TITLE.replace("_", " ")) is None
    printed = run(POOL, tmp_path / "out", capsys)
    captured = capsys.readouterr()
    assert "Traceback" not in printed + captured.err and "from the cache" not in printed
    assert sweeps == [1, 1]
    assert (tmp_path / "out" / f"{TITLE}_metrics.csv").exists()
    assert source.cached_sweep(TITLE.replace("_", " ")) is not None  # stored again by the run


def test_the_app_opens_on_runs_results_and_run_on_the_apps(cache_dir, sweeps, tmp_path, capsys) -> None:
    from sim.export.csv_files import metrics_csv_text
    from sim.export.overload_csv import latency_csv_text

    run(POOL, tmp_path / "run", capsys)
    source = ConfigSource(load(POOL), cache=SweepCache.default())
    hit = source.cached_sweep(TITLE.replace("_", " "))
    assert hit is not None and sweeps == [1]
    result, _created = hit
    out = tmp_path / "run"
    assert metrics_csv_text(result) == (out / f"{TITLE}_metrics.csv").read_text()
    assert latency_csv_text(result) == (out / f"{TITLE}_latency.csv").read_text()
    # The other way round: the app's sweep (another seed), then `run` reads it back.
    reseeded = source.with_seed(9)
    assert reseeded.cached_sweep(TITLE.replace("_", " ")) is None
    swept = reseeded.sweep(TITLE.replace("_", " "), workers=1)
    assert sweeps == [1, 1]
    printed = run(POOL, tmp_path / "after_app", capsys, "--seed", "9")
    assert sweeps == [1, 1] and "from the cache" in printed
    assert metrics_csv_text(swept) == (tmp_path / "after_app" / f"{TITLE}_metrics.csv").read_text()


def test_no_cache_when_switched_off(monkeypatch) -> None:
    from sim.runs.sweep import run_sweep

    monkeypatch.setenv("BACKOFF_SIM_CACHE", "off")
    assert cache_module.sweep_cache_dir() is None
    cache = SweepCache.default()
    spec = load(POOL).simulations[0]
    cache.put(run_sweep(spec, workers=1))
    assert cache.get(spec) is None
    monkeypatch.setenv("BACKOFF_SIM_CACHE", "")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache_module.sweep_cache_dir() == Path("/somewhere/backoff-sim")
    assert SweepCache.default(enabled=False).directory is None  # --no-cache


def test_the_cache_stays_under_its_cap_the_least_recently_used_out_first(tmp_path) -> None:
    from sim.runs.sweep import run_sweep

    specs = [load(POOL).with_seed(seed).simulations[0] for seed in (1, 2, 3)]
    results = [run_sweep(spec, workers=1) for spec in specs]
    import os

    cache = SweepCache(tmp_path)
    cache.put(results[0])
    one = entry(tmp_path).stat().st_size
    cache.max_bytes = 2 * one + one // 2  # room for two entries (theirs are about the same size)
    cache.put(results[1])
    # Their use told apart by the clock whatever its grain (a file's times move by the jiffy):
    # the first used long ago, the second later, then the first again now.
    os.utime(cache._path(specs[0]), (1_000_000, 1_000_000))
    os.utime(cache._path(specs[1]), (2_000_000, 2_000_000))
    assert cache.get(specs[0]) is not None  # used now: the second is the least recently used
    cache.put(results[2])
    kept = [cache.get(spec) is not None for spec in specs]
    assert kept == [True, False, True]
    assert sum(p.stat().st_size for p in tmp_path.glob(f"*{SWEEP_SUFFIX}")) <= cache.max_bytes


def test_events_none_writes_no_events_file_and_all_every_runs(tmp_path, capsys) -> None:
    spec = load(POOL).simulations[0]
    out = tmp_path / "out"
    run(POOL, out, capsys)
    sample = read_events_csv(out / f"{TITLE}_events.csv")
    assert len(sample) == len(spec.labels)  # one example run per strategy
    kept = {k: v for k, v in files(out).items() if not k.endswith("_events.csv")}

    # Over the earlier set: its events file goes with it (a set is the files its command writes).
    printed = run(POOL, out, capsys, "--events", "none")
    assert not list(out.glob("*_events.csv"))
    assert "no events file with --events none" in printed
    provenance = (out / f"{TITLE}_provenance.json").read_text()
    assert "_events.csv" not in provenance
    assert files(out) == kept  # every other file as with the example runs' events

    run(POOL, tmp_path / "all", capsys, "--events", "all")
    every = read_events_csv(tmp_path / "all" / f"{TITLE}_events.csv")
    assert {(k.strategy, k.clients, k.repetition) for k in every} == {
        (label, n, r) for label in spec.labels for n in spec.clients for r in range(spec.repeat)}
    for key, history in sample.items():  # the example runs are among them, event for event
        assert list(every[key].times) == list(history.times)
        assert list(every[key].packed) == list(history.packed)


@pytest.mark.parametrize("value", ["some", "-1", "2.5"])
def test_a_bad_events_mode_is_one_line(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "--events", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--events" in err and "none, sample, all" in err and "Traceback" not in err


def test_an_entry_builds_only_the_simulators_data_classes() -> None:
    from sim.exploration.cache import _SweepUnpickler

    class_of = _SweepUnpickler._allowed
    assert class_of("sim.runs.sweep", "SweepResult") is not None
    assert class_of("sim.core.history", "History") is not None
    assert class_of("numpy", "dtype") is not None
    # A function of the simulator, a class that starts processes, the standard library: refused.
    for module, name in (("sim.runs.engine", "record_run"), ("sim.runs.procpool", "WorkerPool"),
                         ("os", "system"), ("builtins", "eval"), ("numpy", "load")):
        assert class_of(module, name) is None, (module, name)
