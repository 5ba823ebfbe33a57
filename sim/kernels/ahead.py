"""The kernels' entry points compiled ahead of time (numba's ``pycc``): a C extension module per
kernel, which a process imports in ~10 ms, where numba's import and its first dispatch take
~0.45 s in every process that runs a kernel (``backoff-sim run``'s, each fluid map's).

The module is compiled from the same source by the same compiler as numba's ``njit`` (the same
flags: Python's error model, no fastmath, no bounds checks), so its numbers are the jit's
bit for bit. It is built the first time a kernel is called where the command layer asked for it
(``enable``), in a process of its own (numba, setuptools and a C compiler: the ``fast`` extra
and the system's ``cc``), for the types of that call's arguments, and kept beside numba's caches
(or in ``$XDG_CACHE_HOME/backoff-sim/kernels`` where that folder cannot be written) under a name
that holds the digest of the sources compiled into it, of numba's install, numpy's and Python's
versions, and of those types: a module is only ever called with arguments of the types it was
built for (``Ahead``: others take numba's jit). A build that fails leaves a note of why, so for
a day later processes take numba's jit without trying again.

Only the headless commands ask for it, and only their main thread takes it: a ``pycc`` function
keeps the interpreter's lock while it runs (numba's jit here releases it, ``nogil``), and the app
runs kernels in threads beside its screen, as a notebook may. This module imports neither numba
nor setuptools.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:
    import fcntl  # the builds' lock (POSIX): without it, numba's jit as before
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# The kernels whose ``run`` is built so (``sim.kernels.<name>``), called from Python; the
# functions they call are compiled into them.
KERNELS = ("contention", "latency_closed", "pool_open", "fluid")
PREFIX = "_ahead_"
BUILD_SECONDS = 1800  # a bound on one build (~5 s for the contention kernel on 2 cores)
FAILED_SECONDS = 24 * 3600  # a failed build is tried again after a day
SCRATCH_SECONDS = 3600  # a build's scratch folder older than this was left by a killed process
AHEAD_ENV = "BACKOFF_SIM_AHEAD"  # "0": numba's jit only, as the app and the library take
# The sources compiled into the kernels besides their own folder's: the event and outcome codes.
COMPILED_IN = ("core/events.py", "vocabulary/outcomes.py")
_enabled = False


def enable() -> None:
    """Take the ahead-of-time kernels in this process from now on (not where
    ``BACKOFF_SIM_AHEAD=0``): called by the headless commands before any kernel is imported,
    and by their pools' workers as they start (``sim.runs.procpool``: forks have it already)."""
    global _enabled
    _enabled = fcntl is not None and os.environ.get(AHEAD_ENV, "").strip() != "0"


def enabled() -> bool:
    """Whether this process takes the ahead-of-time kernels (``enable``)."""
    return _enabled


def _kernels_folder() -> Path:
    return Path(__file__).resolve().parent


_folder: Path | None = None


def folder() -> Path:
    """Where the modules are kept: beside numba's caches when that folder can be written."""
    global _folder
    if _folder is None:
        beside = _kernels_folder() / "__pycache__"
        try:
            beside.mkdir(exist_ok=True)
            writable = os.access(beside, os.W_OK)
        except OSError:
            writable = False
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
        _folder = beside if writable else Path(base) / "backoff-sim" / "kernels"
    return _folder


def _digest(text: str | bytes, size: int) -> str:
    import hashlib

    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:size]


_stamp: str | None = None


def stamp() -> str:
    """What a built module must match: the sources compiled into it (ten digits, apart: an
    edit's modules are forgotten, ``forget_stale``), then numba's install (its path and when it
    was written), numpy's and Python's versions and the machine (another environment's are kept)."""
    global _stamp
    if _stamp is None:
        spec = importlib.util.find_spec("numba")
        numba_file = spec.origin if spec is not None and spec.origin else ""
        numba_written = os.stat(numba_file).st_mtime_ns if numba_file else 0
        parts = (numba_file, str(numba_written), np.__version__, sys.version, platform.machine(),
                 sys.implementation.cache_tag or "")
        _stamp = f"{sources_digest()[:10]}_{_digest(chr(10).join(parts), 8)}"
    return _stamp


def sources_digest(folder_: Path | None = None) -> str:
    """The digest of the sources compiled into the kernels (``folder_``: this one's, and
    ``COMPILED_IN``), which numba's caches (``sim.kernels.jit.forget_stale``) and the built
    modules are kept against."""
    folder_ = _kernels_folder() if folder_ is None else folder_
    files = [*sorted(folder_.glob("*.py")), *(folder_.parent / name for name in COMPILED_IN)]
    return _digest(b"".join(p.read_bytes() for p in files if p.exists()), 64)


def module_name(kernel: str, signature: str) -> str:
    """The extension module's name (its ``PyInit_`` symbol): the kernel, ``stamp`` and the
    argument types it takes."""
    return f"{PREFIX}{kernel}_{stamp()}_{_digest(signature, 8)}"


def _paths(kernel: str, signature: str) -> tuple[Path, Path]:
    """(the module, the note of a failed build)."""
    name = module_name(kernel, signature)
    return folder() / (name + importlib.machinery.EXTENSION_SUFFIXES[0]), folder() / (name + ".failed")


# Argument types as numba's signature strings name them (``numba.typeof`` of each).
_ARRAY_TYPES = {np.dtype(np.int64): "i8", np.dtype(np.float64): "f8", np.dtype(np.bool_): "b1"}


def _type_of(value: object) -> str | None:
    """numba's name for ``value``'s type as the jit would type it, or None (not built for)."""
    if type(value) is np.ndarray:
        code = _ARRAY_TYPES.get(value.dtype)
        flags = value.flags
        if code is None or not (flags.c_contiguous and flags.writeable and flags.aligned) or value.ndim < 1:
            return None
        return f"{code}[{', '.join([':'] * (value.ndim - 1) + ['::1'])}]"
    if type(value) is bool or type(value) is np.bool_:
        return "b1"
    if (type(value) is int and -(1 << 63) <= value < (1 << 63)) or type(value) is np.int64:
        return "i8"
    if type(value) is float or type(value) is np.float64:
        return "f8"
    return None


def signature_of(args: tuple) -> str | None:
    """The jit's signature for these arguments (the status returned is an int64), or None."""
    types = [_type_of(a) for a in args]
    if any(t is None for t in types):
        return None
    return f"i8({', '.join(types)})"  # type: ignore[arg-type]


class Ahead:
    """A built kernel's ``run``, called in the main thread with arguments of the types it was
    built for; otherwise numba's jit of the same source (``fallback``), as its module's own
    ``run`` would. A pycc module does not check them itself: an array of another dtype would be
    read as the built one."""

    def __init__(self, function: Callable, signature: str, fallback: Callable[[], Callable],
                 py_func: Callable) -> None:
        self.function = function
        self.signature = signature
        self.py_func = py_func  # the plain source, as ``jit.plain`` finds it
        self._fallback = fallback
        self._count, self._fits = check_of(signature)
        self._main = threading.main_thread().ident

    def __call__(self, *args):
        if len(args) == self._count and threading.get_ident() == self._main and self._fits(*args):
            return self.function(*args)
        return self._fallback()(*args)


def _parts(signature: str) -> list[str]:
    """The argument types of a signature string, ``"i8(i8[::1], f8)"`` → ``["i8[::1]", "f8"]``."""
    inner = signature[signature.index("(") + 1:-1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return [p for p in parts if p]


# Each scalar type's test, on ``a`` (``_type_of``'s, which a fallback to the jit keeps exact).
_SCALAR_TESTS = {"b1": "(type({a}) is bool or type({a}) is bool_)",
                 "i8": "((type({a}) is int and -9223372036854775808 <= {a} <= 9223372036854775807) "
                       "or type({a}) is int64)",
                 "f8": "(type({a}) is float or type({a}) is float64)"}


def check_of(signature: str) -> tuple[int, Callable[..., bool]]:
    """(how many arguments, one function that tests them all against the signature's types):
    written out as one expression, as a test per argument in a loop cost 8 µs of a kernel
    call's ~70 µs in the sample."""
    parts = _parts(signature)
    names = [f"a{i}" for i in range(len(parts))]
    tests, scope = [], {"ndarray": np.ndarray, "bool_": np.bool_, "int64": np.int64, "float64": np.float64}
    by_code = {code: dtype for dtype, code in _ARRAY_TYPES.items()}
    for i, (name, part) in enumerate(zip(names, parts)):
        if "[" in part:
            scope[f"D{i}"] = by_code[part[:2]]
            ndim = part.count(",") + 1
            tests.append(f"(type({name}) is ndarray and {name}.dtype == D{i} and {name}.ndim == {ndim} "
                         f"and (f := {name}.flags).c_contiguous and f.writeable and f.aligned)")
        else:
            tests.append(_SCALAR_TESTS[part].format(a=name))
    source = f"def fits({', '.join(names)}):\n    return {' and '.join(tests) or 'True'}\n"
    exec(compile(source, f"<checks of {signature}>", "exec"), scope)
    return len(parts), scope["fits"]


def load(kernel: str, args: tuple, fallback: Callable[[], Callable], py_func: Callable) -> Ahead | None:
    """The ahead-of-time ``run`` of ``kernel`` for these arguments' types, built first if it is
    not yet (waiting for another process's build of it); None when it cannot be: the types are
    not buildable, or a build failed within a day (its note says why)."""
    signature = signature_of(args)
    if signature is None:
        return None
    module, note = _paths(kernel, signature)
    if _recent(note):
        return None
    if not module.exists():
        forget_stale(module.parent)
        if not _build_locked(kernel, signature, module, note):
            _found.pop((folder(), kernel), None)  # a note may have been left: look again
            return None
    _found[(folder(), kernel)] = ("built", time.monotonic())
    loaded = _import(module_name(kernel, signature), module)
    return None if loaded is None else Ahead(loaded.run, signature, fallback, py_func)


# What this process found of each (folder, kernel): "built", "failed" (a note within the day),
# or "" (neither: looked for again after UNBUILT_SECONDS, as a build may be under way). Asked
# before every run (``sim.runs.fast``), so a folder is not listed each time. A module removed
# from outside after it was found is built again by ``load``.
_found: dict[tuple[Path, str], tuple[str, float]] = {}
UNBUILT_SECONDS = 1.0


def _state(kernel: str) -> str:
    key = (folder(), kernel)
    known = _found.get(key)
    if known is not None and (known[0] or time.monotonic() - known[1] < UNBUILT_SECONDS):
        return known[0]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    paths = list(key[0].glob(f"{PREFIX}{kernel}_{stamp()}_*"))
    if any(p.name.endswith(suffix) for p in paths):
        found = "built"
    elif any(p.name.endswith(".failed") and _recent(p) for p in paths):
        found = "failed"
    else:
        found = ""
    _found[key] = (found, time.monotonic())
    return found


def ready(kernel: str) -> bool:
    """Whether ``kernel`` is built for some argument types (its load then costs ~10 ms, not
    numba's ~0.45 s): an estimate for ``sim.runs.fast`` and ``sim.fluid.compiled``, which
    ``load`` makes sure of."""
    return _enabled and _state(kernel) == "built"


def failed(kernel: str) -> bool:
    """Whether a build of ``kernel`` failed within the day and none is built: this process's
    calls then take numba's jit (``load``)."""
    return _enabled and _state(kernel) == "failed"


def _recent(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime < FAILED_SECONDS
    except OSError:
        return False


def _import(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    try:
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except (ImportError, OSError):
        return None
    sys.modules[name] = module
    return module


def _build_locked(kernel: str, signature: str, module: Path, failed: Path) -> bool:
    """Build under a lock: another process building it meanwhile is waited for, then its module
    taken. (Without the lock two builds would only write the same module twice, each renamed
    into place whole.)"""
    try:
        module.parent.mkdir(parents=True, exist_ok=True)
        lock = open(module.with_name(module_name(kernel, signature) + ".lock"), "a")
    except OSError:
        return False
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if module.exists():
            return True
        if _recent(failed):
            return False
        return _build(kernel, signature, module, failed)


def _build(kernel: str, signature: str, module: Path, failed: Path) -> bool:
    """Compile the module in a child process (its output kept out of this one's streams; it
    ends if this process does), into a scratch folder beside ``module``, then rename it into
    place: never half a module. A failure that would repeat (the child's error: no compiler, no
    setuptools) is noted; a stop, a signal or the time bound is not. (The child, never asked
    for the built kernels, compiles with numba's jit.)"""
    scratch = Path(tempfile.mkdtemp(prefix=f".{module.name}.", dir=module.parent))
    try:
        done = subprocess.run(build_command(kernel, signature, scratch), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=BUILD_SECONDS)
        built = [p for p in scratch.iterdir()
                 if p.name.startswith(module_name(kernel, signature)) and p.suffix in (".so", ".pyd")]
        if done.returncode == 0 and len(built) == 1:
            os.replace(built[0], module)
            return True
        if done.returncode > 0:
            reason = (done.stderr or done.stdout or "").strip().splitlines()[-20:]
            _write(failed, "\n".join([f"exit status {done.returncode}", *reason]) + "\n")
        return False
    except subprocess.TimeoutExpired:
        return False
    except (OSError, subprocess.SubprocessError) as exc:
        _write(failed, f"{type(exc).__name__}: {exc}\n")
        return False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def build_command(kernel: str, signature: str, out: Path) -> list[str]:
    """The build's child process (``build_main``), with this ``sim`` first on its path."""
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds ``sim``
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); "
                                  "from sim.kernels.ahead import build_main; build_main()",
            kernel, signature, str(out), module_name(kernel, signature), str(os.getpid())]


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


def build_main() -> None:
    """In the build's child: ``KERNEL SIGNATURE OUT NAME PARENT`` (numba's jit of the kernel's
    module, the plain ``run`` exported under ``signature`` by pycc into OUT as module NAME);
    it ends as soon as PARENT is gone (a worker killed by its pool's stop)."""
    kernel, signature, out, name, parent = sys.argv[1:6]
    if kernel not in KERNELS:
        raise SystemExit(f"unknown kernel {kernel!r}")

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(0.2)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending deprecation
        from numba.pycc import CC
    source = importlib.import_module(f"sim.kernels.{kernel}")
    cc = CC(name)
    cc.output_dir = out
    cc.verbose = False
    cc.export("run", signature)(source.run.py_func)  # numba's jit here: its plain source
    cc.compile()


def forget_stale(folder_: Path) -> None:
    """Drop, in ``folder_``, the modules and notes built from other sources than this one's (an
    edit; another environment's of the same sources are kept), and the scratch folders a killed
    build left (an hour old)."""
    sources = stamp().partition("_")[0]
    for path in folder_.glob(f"{PREFIX}*"):
        if not path.name.startswith(f"{PREFIX}{_kernel_of(path.name)}_{sources}_"):
            with contextlib.suppress(OSError):
                path.unlink()
    for scratch in folder_.glob(f".{PREFIX}*"):
        with contextlib.suppress(OSError):
            if scratch.is_dir() and time.time() - scratch.stat().st_mtime > SCRATCH_SECONDS:
                shutil.rmtree(scratch, ignore_errors=True)


def _kernel_of(name: str) -> str:
    """The kernel a built file's name is of (kernels' names hold underscores)."""
    rest = name[len(PREFIX):]
    return next((k for k in sorted(KERNELS, key=len, reverse=True) if rest.startswith(k + "_")), "")
