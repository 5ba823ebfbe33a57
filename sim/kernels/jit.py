"""``maybe_njit``: numba's ``njit`` when numba is importable and not switched off, else nothing.

So a kernel is one source: compiled where numba is installed, plain Python where it is not.
``BACKOFF_SIM_PURE=1`` in the environment turns the compiled fast paths off (the engine then
runs its reference models; see ``sim.runs.fast``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sim.kernels import ahead

F = TypeVar("F", bound=Callable)

PURE_ENV = "BACKOFF_SIM_PURE"


def pure_requested() -> bool:
    """True when the environment asks for the reference engine only."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


# numba is an optional extra (the product runs without it); found without importing it, as its
# import alone takes ~0.3 s and most runs never need it.
COMPILED = importlib.util.find_spec("numba") is not None


def available() -> bool:
    """numba is installed and the compiled fast paths are not switched off."""
    return COMPILED and not pure_requested()


# Whether some compiled kernel has run in this process: numba's import and its first dispatch
# (its registries, 0.14-0.19 s with scipy held back, ``_import_numba``) are then paid, and
# another kernel costs only its own cache.
_dispatched = False


def note_dispatched() -> None:
    """A compiled kernel has run in this process (``sim.runs.fast.warm_up``, the fluid loop)."""
    global _dispatched
    _dispatched = True


def dispatched() -> bool:
    """Whether a kernel compiled by numba has run in this process (``note_dispatched``; one
    built ahead of time loads none of numba's registries)."""
    return _dispatched and "numba" in sys.modules


# The digest of the kernels' sources their on-disk caches were compiled from (``forget_stale``).
SOURCES_STAMP = "kernels.sources"
_checked = False


def forget_stale(folder: Path) -> None:
    """Drop numba's caches in ``folder``/__pycache__ when a source of ``folder`` changed since
    they were written. numba stamps a cached function with its own file only, and a kernel
    compiles in the helpers it calls from other files (the heap, the delays): after an edit of
    one of those alone, the kernels' caches would still load, stale. So one digest of every
    source is kept beside the caches; on a mismatch they are deleted and compiled again. A
    folder that cannot be written (numba then caches elsewhere) is left as it is."""
    digest = ahead.sources_digest(folder)
    cache = folder / "__pycache__"
    stamp = cache / SOURCES_STAMP
    try:
        if stamp.read_text(encoding="ascii") == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for stale in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
            stale.unlink(missing_ok=True)
        temporary = cache / f"{SOURCES_STAMP}.{os.getpid()}.tmp"
        temporary.write_text(digest, encoding="ascii")
        os.replace(temporary, stamp)
    except OSError:
        pass


class _ScipyHeldBack:
    """A meta path finder that refuses scipy, while it is on ``sys.meta_path``, to the thread
    that put it there (``_import_numba``): another thread's import of scipy meanwhile goes on."""

    thread: int | None = None

    @classmethod
    def find_spec(cls, name: str, path=None, target=None):
        if (name == "scipy" or name.startswith("scipy.")) and threading.get_ident() == cls.thread:
            raise ModuleNotFoundError(f"{name} held back while numba loads its registries", name=name)
        return None


def _import_numba():
    """numba, its BLAS probe kept from importing scipy.

    numba's first dispatch in a process imports ``numba.np.arraymath``, which probes for a BLAS
    by importing ``scipy.linalg.cython_blas`` where scipy is installed: 0.19 s of the 0.4 s
    first dispatch on an idle 2-core machine (scipy.linalg, numpy.f2py), for every kernel load
    (the app's, each sweep's, a fluid map's), though no kernel here calls a BLAS routine. The
    probe's only use (``arraymath._HAVE_BLAS``) picks the inner product of ``np.correlate`` and
    ``np.convolve`` in compiled code: without it, a loop. So that module is imported here, first,
    with scipy refused while it is; a process that has imported scipy.linalg's BLAS already keeps
    numba's usual probe (it costs nothing there)."""
    import numba

    if "numba.np.arraymath" not in sys.modules and "scipy.linalg.cython_blas" not in sys.modules:
        _ScipyHeldBack.thread = threading.get_ident()
        sys.meta_path.insert(0, _ScipyHeldBack)
        try:
            import numba.np.arraymath  # noqa: F401  (its probe, with scipy refused)
        except ImportError:  # a numba that needs scipy there: its first dispatch imports both
            pass
        finally:
            sys.meta_path.remove(_ScipyHeldBack)
            _ScipyHeldBack.thread = None
    return numba


def maybe_njit(function: F | None = None, *, inline: bool = False) -> F | Callable[[F], F]:
    """Compile ``function`` with numba (cached on disk beside its module, ``forget_stale``)
    when numba is installed; otherwise return it unchanged. The plain function stays reachable
    as ``plain(function)`` for the tests. Where the process takes the ahead-of-time kernels
    (``sim.kernels.ahead.enable``), a ``Deferred`` instead: numba is imported only if a call
    needs its jit. ``@maybe_njit(inline=True)``: a helper numba compiles into each of its
    callers (``inline="always"``), so a hot call passes no arrays: numba counts a reference to
    each array argument of a call (the fluid step loop spent 70% of its time there); the same
    operations in the same order, so the same bits."""
    if function is None:
        return lambda f: maybe_njit(f, inline=inline)  # type: ignore[return-value]
    if not COMPILED:
        return function
    if ahead.enabled():
        return Deferred(function, inline)  # type: ignore[return-value]
    return _njit(function, inline)


def _njit(function: Callable, inline: bool = False) -> Callable:
    global _checked
    numba = _import_numba()
    if not _checked:
        forget_stale(Path(__file__).resolve().parent)
        _checked = True
    return numba.njit(cache=True, nogil=True, inline="always" if inline else "never")(function)


_deferred: list[Deferred] = []


class Deferred:
    """A kernel function of a process that takes the ahead-of-time kernels (``sim.kernels.ahead``).

    A kernel's entry point (``run``) is resolved at its first call: in the main thread, the
    built module for that call's argument types (built then if it is not yet), else numba's jit.
    Any use of numba's jit first makes every deferred function a numba function (``_materialize``)
    and puts it in place of its ``Deferred`` in the kernels' modules, so the jit compiles the
    helpers it calls as it would have at import. A helper called from Python (a run's first few
    heap pushes, by its plain source) runs its plain source: numba is not imported for it."""

    def __init__(self, function: Callable, inline: bool = False) -> None:
        self.py_func = function
        self.inline = inline
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__
        self.__module__ = function.__module__
        self.__doc__ = function.__doc__
        self._target: Callable | None = None
        self._jit: Callable | None = None
        kernel = function.__module__.rpartition(".")[2]
        self._kernel = (kernel if function.__name__ == "run" and function.__module__ == f"sim.kernels.{kernel}"
                        and kernel in ahead.KERNELS else None)
        _deferred.append(self)

    def __call__(self, *args):
        target = self._target
        if target is None:
            if self._kernel is None:
                return self.py_func(*args)
            target = self._resolve(args)
        return target(*args)

    def _resolve(self, args: tuple) -> Callable:
        with _resolving:
            if self._target is None:
                built = None
                if ahead.enabled() and threading.current_thread() is threading.main_thread():
                    built = ahead.load(self._kernel, args, self.jitted, self.py_func)
                if built is not None:
                    setattr(sys.modules[self.__module__], self.__name__, built)  # ``k.run`` from now on
                self._target = built if built is not None else self.jitted()
            return self._target

    def jitted(self) -> Callable:
        """numba's jit of this function (every deferred function's made first)."""
        with _resolving:
            if self._jit is None:
                _materialize()
        assert self._jit is not None
        return self._jit


_resolving = threading.RLock()  # one thread resolves or materialises at a time


def _materialize() -> None:
    """Every deferred function as numba's jit, put in place of its ``Deferred`` in the kernels'
    modules (an entry point already resolved to its built module keeps it)."""
    for deferred in list(_deferred):
        if deferred._jit is None:
            deferred._jit = _njit(deferred.py_func, deferred.inline)
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("sim.kernels."):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, Deferred) and value._jit is not None:
                setattr(module, name, value._jit)


def plain(function: Callable) -> Callable:
    """The uncompiled source of a ``maybe_njit`` function (itself when numba is absent)."""
    return getattr(function, "py_func", function)
