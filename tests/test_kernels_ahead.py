"""The kernels built ahead of time (``sim.kernels.ahead``): the argument types a module is built
for and checked against at each call, a call of other types taking numba's jit, a failed build
noted once and never tried again, and (where numba is installed) a sweep by the built module
with numba never imported, the same numbers as numba's jit, and a process whose build failed
taking the jit for every kernel function with the same numbers."""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.kernels import ahead, jit

ROOT = Path(__file__).resolve().parent.parent

VALUES = [np.zeros(3, dtype=np.int64), np.zeros(3), np.zeros((2, 3)), np.zeros((2, 3), dtype=np.int64),
          np.zeros((2, 3, 4)), np.zeros(2, dtype=np.bool_), np.zeros((3, 2))[:, 0], np.zeros((2, 3)).T,
          np.zeros(3, dtype=np.float32), np.zeros(3, dtype=np.int32), True, np.bool_(False), 3, np.int64(3),
          2.5, np.float64(2.5), "text", None, np.zeros(())]


def _readonly() -> np.ndarray:
    a = np.zeros(3)
    a.flags.writeable = False
    return a


def test_signature_names_the_types_numba_would() -> None:
    args = (np.zeros(4, dtype=np.int64), np.zeros((2, 3)), np.zeros((2, 2, 2), dtype=np.int64),
            np.zeros(2, dtype=np.bool_), True, 7, 0.5)
    assert ahead.signature_of(args) == "i8(i8[::1], f8[:, ::1], i8[:, :, ::1], b1[::1], b1, i8, f8)"
    # Not built for: views that are not C-contiguous, read-only arrays, other dtypes, objects.
    for odd in (np.zeros((3, 2))[:, 0], np.zeros((2, 3)).T, _readonly(), np.zeros(3, dtype=np.float32),
                np.zeros(()), "text", None, [1.0]):
        assert ahead.signature_of((np.zeros(2), odd)) is None, odd


def test_each_call_is_checked_against_the_built_types() -> None:
    """``check_of`` (the test at each call) agrees with ``_type_of`` on every value and type."""
    parts = sorted({t for t in map(ahead._type_of, VALUES) if t is not None})
    assert len(parts) >= 8
    for part in parts:
        count, fits = ahead.check_of(f"i8({part})")
        assert count == 1
        for value in [*VALUES, _readonly()]:
            assert fits(value) == (ahead._type_of(value) == part), (part, value)
    count, fits = ahead.check_of(f"i8({', '.join(parts)})")
    ok = [next(v for v in VALUES if ahead._type_of(v) == part) for part in parts]
    assert count == len(parts) and fits(*ok)
    assert not fits(*ok[:-1], "text")


def test_a_call_of_other_types_takes_the_fallback() -> None:
    calls: list[str] = []

    def built(*args):
        calls.append("built")
        return 0

    def jitted(*args):
        calls.append("jit")
        return 1

    args = (np.zeros(3, dtype=np.int64), np.zeros((2, 2)), 5)
    kernel = ahead.Ahead(built, ahead.signature_of(args), lambda: jitted, py_func=jitted)
    assert kernel(*args) == 0
    assert kernel(np.zeros(3), np.zeros((2, 2)), 5) == 1  # floats where the module takes integers
    assert kernel(args[0], np.zeros((2, 2)).T, 5) == 1  # a transposed view
    assert kernel(args[0], args[1], 5.0) == 1  # a float where it takes an integer
    assert kernel(*args[:2]) == 1  # an argument short
    assert calls == ["built", "jit", "jit", "jit", "jit"]
    assert jit.plain(kernel) is jitted


def test_only_where_asked_and_not_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_enabled", False)
    assert not ahead.enabled()
    monkeypatch.setenv(ahead.AHEAD_ENV, "0")
    ahead.enable()
    assert not ahead.enabled()
    monkeypatch.setenv(ahead.AHEAD_ENV, "1")
    ahead.enable()
    assert ahead.enabled() == (ahead.fcntl is not None)


def test_a_failed_build_is_noted_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ahead, "folder", lambda: tmp_path)
    monkeypatch.setattr(ahead, "_enabled", True)
    failing = [sys.executable, "-c", "import sys; print('no C compiler here', file=sys.stderr); sys.exit(3)"]
    monkeypatch.setattr(ahead, "build_command", lambda *a: failing)
    args = (np.zeros(3, dtype=np.int64), 1.5)
    assert ahead.load("contention", args, lambda: None, py_func=len) is None
    module, failed = ahead._paths("contention", ahead.signature_of(args))
    note = failed.read_text(encoding="utf-8")
    assert "exit status 3" in note and "no C compiler here" in note
    assert not module.exists() and not [p for p in tmp_path.iterdir() if p.is_dir()]  # no scratch left

    def never(*a):
        raise AssertionError("built again after a failed build")

    monkeypatch.setattr(ahead, "build_command", never)
    assert ahead.load("contention", args, lambda: None, py_func=len) is None
    assert not ahead.ready("contention") and ahead.failed("contention")
    from sim.runs import fast
    assert fast.load_events(fast.CONTENTION, 2) == 2 * fast.MIN_EVENTS  # numba's jit in each worker
    # A day later it is tried again.
    old = failed.stat().st_mtime - ahead.FAILED_SECONDS - 1
    os.utime(failed, (old, old))
    monkeypatch.setattr(ahead, "build_command", lambda *a: failing)
    assert ahead.load("contention", args, lambda: None, py_func=len) is None
    assert failed.stat().st_mtime > old


def test_what_is_built_is_found_once_and_what_is_not_looked_for_again(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    # Asked before every run: the folder is listed once for what is there, again for what is
    # not only after UNBUILT_SECONDS (a build may finish meanwhile).
    monkeypatch.setattr(ahead, "folder", lambda: tmp_path)
    monkeypatch.setattr(ahead, "_enabled", True)
    monkeypatch.setattr(ahead, "UNBUILT_SECONDS", 1e9)
    assert not ahead.ready("fluid") and not ahead.failed("fluid")
    module = tmp_path / f"{ahead.PREFIX}fluid_{ahead.stamp()}_0123abcd{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    module.write_bytes(b"")
    assert not ahead.ready("fluid")  # not listed again yet
    monkeypatch.setattr(ahead, "UNBUILT_SECONDS", 0.0)
    assert ahead.ready("fluid")
    module.unlink()
    assert ahead.ready("fluid")  # found once (a call then builds it again: ``load``)
    monkeypatch.setattr(ahead, "_enabled", False)
    assert not ahead.ready("fluid") and not ahead.failed("fluid")


@pytest.mark.parametrize("child", [
    pytest.param("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", id="killed"),
    pytest.param("import time; time.sleep(30)", id="past the time bound")])
def test_a_build_stopped_from_outside_is_not_noted(child: str, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """A build the machine stopped (a signal, the time bound) may succeed next time: no note."""
    monkeypatch.setattr(ahead, "folder", lambda: tmp_path)
    monkeypatch.setattr(ahead, "BUILD_SECONDS", 0.5)
    monkeypatch.setattr(ahead, "build_command", lambda *a: [sys.executable, "-c", child])
    args = (np.zeros(2),)
    assert ahead.load("fluid", args, lambda: None, py_func=len) is None
    module, failed = ahead._paths("fluid", ahead.signature_of(args))
    assert not failed.exists() and not module.exists()


def test_stale_modules_are_forgotten(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An edit's modules go; another environment's of the same sources, and a live build's
    scratch folder, stay; a killed build's scratch folder an hour old goes."""
    monkeypatch.setattr(ahead, "folder", lambda: tmp_path)
    sources, environment = ahead.stamp().split("_")
    ours = tmp_path / f"{ahead.module_name('latency_closed', 'i8(f8)')}.so"
    other_env = tmp_path / f"_ahead_latency_closed_{sources}_00000000_12345678.so"
    edited = tmp_path / f"_ahead_latency_closed_0123456789_{environment}_12345678.so"
    edited_lock = edited.with_suffix(".lock")
    live, killed = tmp_path / "._ahead_fluid_x.live", tmp_path / "._ahead_fluid_x.killed"
    for path in (ours, other_env, edited, edited_lock):
        path.write_text("")
    for path in (live, killed):
        path.mkdir()
    old = killed.stat().st_mtime - ahead.SCRATCH_SECONDS - 1
    os.utime(killed, (old, old))
    ahead.forget_stale(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ours.name, other_env.name, live.name])


# A sweep by one kernel in a fresh process: "ahead" (built, numba never imported), "failed"
# (every build fails: numba's jit for every kernel function) or "jit" (not asked for).
SWEEP = """
import json, sys
mode, config, kernel = sys.argv[1:4]
from sim.kernels import ahead
if mode != "jit":
    ahead.enable()
if mode == "failed":
    ahead.load = lambda *a, **k: None
from sim.kernels import jit
if kernel == "fluid":
    from sim.exploration.plan import load_document
    from sim.fluid import cells, compiled
    compiled.worth_compiling = lambda cases: jit.available() and compiled.takes(cases)  # however small
    plan = load_document(config).explores[0]
    out = repr([r.values for r in cells.fluid_runs([(c.spec, s) for c in plan.cells
                                                   for s in range(len(c.spec.strategies))])])
else:
    from sim.pipeline import load, sweep
    from sim.runs import fast
    fast.warm_up([kernel])  # every run of the sweep takes the kernel, however small
    out = repr([(r.work.tolist(), r.duration.tolist(), r.gave_up.tolist(), r.events.tolist(),
                 r.retries_denied.tolist(), r.calls_refused.tolist(), r.success_rate.tolist(),
                 sorted(r.open_runs.items())) for r in sweep(load(config), workers=1)])
import importlib
module = importlib.import_module(f"sim.kernels.{kernel}")
from sim.kernels.jit import Deferred
left = [f"{m}.{n}" for m, mod in list(sys.modules.items()) if m.startswith("sim.kernels.")
        for n, v in vars(mod).items() if isinstance(v, Deferred)]
print(json.dumps({"out": out, "numba": "numba" in sys.modules, "kind": type(module.run).__name__,
                  "deferred_left": left}))
"""

CONTENTION_OUTAGE = """
seed = 4
[[simulation]]
title = "Locks_Out"
clients = [3, 8]
repeat = 2
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
outages = [{ start = 5.0, duration = 30.0 }]
strategies = [
  { type = "Constant", constant = 0.5 },
  { type = "FullJitteredExpo", base = 2.0, cap = 1000.0 },
]
"""


def _sweep(mode: str, config: Path, kernel: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (jit.PURE_ENV, ahead.AHEAD_ENV)}
    done = subprocess.run([sys.executable, "-c", SWEEP, mode, str(config), kernel],
                          capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _failure_note(kernel: str) -> str:
    notes = list(ahead.folder().glob(f"{ahead.PREFIX}{kernel}_{ahead.stamp()}_*.failed"))
    return notes[0].read_text(encoding="utf-8") if notes else "no note of a failed build"


# Where numba is installed (the fast extra) on POSIX: without it there is nothing to build (every
# kernel function is its plain Python source, ``jit.maybe_njit``), so the check is not collected.
if jit.COMPILED and ahead.fcntl is not None:
    @pytest.mark.parametrize("kernel, config", [
        ("contention", "tiny.toml"), ("contention", None), ("pool_open", "tiny_pool.toml"),
        ("latency_closed", "tiny_outage.toml"), ("fluid", "tiny_map.toml")])
    def test_built_kernels_give_the_jits_numbers_without_numba(kernel: str, config: str | None,
                                                               tmp_path: Path) -> None:
        if config is None:  # the contention kernel with an outage: its heap pushes from Python
            path = tmp_path / "outage.toml"
            path.write_text(CONTENTION_OUTAGE, encoding="utf-8")
        else:
            path = ROOT / "tests" / "fixtures" / config
        jitted, built, failed = (_sweep(mode, path, kernel) for mode in ("jit", "ahead", "failed"))
        assert jitted["numba"] and jitted["kind"] == "CPUDispatcher"
        assert built["kind"] == "Ahead", f"the {kernel} kernel was not built: {_failure_note(kernel)}"
        assert built["numba"] is False, "numba imported where the built kernel ran"
        assert built["out"] == jitted["out"]
        # A process whose builds fail: every kernel function is numba's jit, none left deferred.
        assert failed["numba"] and failed["kind"] == "CPUDispatcher" and failed["deferred_left"] == []
        assert failed["out"] == jitted["out"]

    def test_the_built_types_are_numbas() -> None:
        """``_type_of`` names each value's type as numba types it (``numba.typeof``)."""
        from numba.core import sigutils

        for value in [*VALUES, _readonly()]:
            name = ahead._type_of(value)
            if name is not None:
                expected = sigutils._parse_signature_string(f"({name},)")[0]
                import numba

                assert numba.typeof(value) == expected, (value, name)


def _taken(_: object) -> bool:
    return ahead.enabled()


def test_a_pools_workers_take_what_their_owner_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers started by forkserver (the command's pools on a terminal) or spawn are not forks
    of the command's process: they are told as they start (``procpool._start_worker``)."""
    import multiprocessing

    from sim.runs.procpool import WorkerPool

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    for asked in (True, False):
        monkeypatch.setattr(ahead, "_enabled", asked)
        with WorkerPool(1, context=multiprocessing.get_context(method)) as pool:
            assert list(pool.imap_unordered(_taken, [None])) == [asked and ahead.fcntl is not None]
