"""The kernels built ahead of time (``sim.kernels.ahead``): the argument types a module is built
for and checked against at each call, a call of other types taking numba's jit, a failed build
noted once and never tried again, and (where numba is installed) a sweep by the built module
with numba never imported, the same numbers as numba's jit, and a process whose build failed
taking the jit for every kernel function with the same numbers."""

from __future__ import annotations

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
    failing = [sys.executable, "-c", "import sys; print('no C compiler here', file=sys.stderr); sys.exit(3)"]
    monkeypatch.setattr(ahead, "build_command", lambda *a: failing)
    args = (np.zeros(3, dtype=np.int64), 1.5)
    assert ahead.load("contention", args, lambda: None, py_func=len) is None
    module, _, failed = ahead._paths("contention")
    note = failed.read_text(encoding="utf-8")
    assert "exit status 3" in note and "no C compiler here" in note
    assert not module.exists() and not list(tmp_path.glob(".*"))  # no scratch folder, no half module

    def never(*a):
        raise AssertionError("built again after a failed build")

    monkeypatch.setattr(ahead, "build_command", never)
    assert ahead.load("contention", args, lambda: None, py_func=len) is None
    assert not ahead.ready("contention")


# A sweep of the contention kernel in a fresh process: "ahead" (built, numba never imported),
# "failed" (every build fails: numba's jit for every kernel function) or "jit" (not asked for).
SWEEP = """
import hashlib, json, sys
mode = sys.argv[1]
from sim.kernels import ahead
if mode != "jit":
    ahead.enable()
if mode == "failed":
    ahead.load = lambda *a, **k: None
from sim.pipeline import load, sweep
from sim.runs import fast
config = load(sys.argv[2])
fast.warm_up(["contention"])  # every run of the sweep takes the kernel, however small
results = sweep(config, workers=1)
digest = hashlib.sha256()
for result in results:
    for name in ("work", "duration", "cost", "gave_up"):
        digest.update(result.metric(name).tobytes())
from sim.kernels import contention, heap
from sim.kernels.jit import Deferred
kinds = {type(contention.run).__name__, type(heap.push).__name__}
left = [f"{m}.{n}" for m, mod in list(sys.modules.items()) if m.startswith("sim.kernels.")
        for n, v in vars(mod).items() if isinstance(v, Deferred)]
print(json.dumps({"digest": digest.hexdigest(), "numba": "numba" in sys.modules, "kinds": sorted(kinds),
                  "deferred_left": left}))
"""


def _sweep(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (jit.PURE_ENV, ahead.AHEAD_ENV)}
    done = subprocess.run([sys.executable, "-c", SWEEP, mode, str(ROOT / "tests" / "fixtures" / "tiny.toml")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# Where numba is installed (the fast extra) on POSIX: without it there is nothing to build (every
# kernel function is its plain Python source, ``jit.maybe_njit``), so the check is not collected.
if jit.COMPILED and ahead.fcntl is not None:
    def test_built_kernels_give_the_jits_numbers_without_numba() -> None:
        jitted, built, failed = _sweep("jit"), _sweep("ahead"), _sweep("failed")
        assert jitted["numba"] and "CPUDispatcher" in jitted["kinds"]
        assert "Ahead" in built["kinds"], f"the contention kernel was not built: {_failure_note()}"
        assert built["numba"] is False, "numba imported where the built kernel ran"
        assert built["digest"] == jitted["digest"]
        # A process whose builds fail: every kernel function is numba's jit, none left deferred.
        assert failed["numba"] and failed["kinds"] == ["CPUDispatcher"] and failed["deferred_left"] == []
        assert failed["digest"] == jitted["digest"]


def _failure_note() -> str:
    ahead.enable()
    try:
        _, _, failed = ahead._paths("contention")
        return failed.read_text(encoding="utf-8") if failed.exists() else "no note of a failed build"
    finally:
        ahead._enabled = False
