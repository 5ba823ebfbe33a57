"""Per-cell result cache on disk: re-running a map with one more axis value computes only the
new cells.

A cell's key is a hash of its full spec (``repr`` of the frozen dataclasses: every field, floats
written exactly) and of the code version (a hash of the simulator's source files), so a change
to any parameter or to the simulator misses the cache rather than returning stale numbers.
Entries are small JSON files written atomically, each with a SHA-256 of its key and its numbers:
an entry that is corrupt, unreadable, edited or copied under another key, or whose arrays do not
fit its cell (strategies, repetitions, client count, the metrics of its server kind) is a miss,
and the cell is computed and stored again, so no absurd number reaches the files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import is_dataclass, replace
from functools import lru_cache
from pathlib import Path

from sim.exploration.summary import VERDICT_VALUES, CellResult, metric_names
from sim.export.atomic import atomic_write_bytes, atomic_write_text, ensure_output_dir
from sim.vocabulary.inputs import InputFileError, read_limited
from sim.settings.spec import SimulationSpec

_SIM_ROOT = Path(__file__).resolve().parent.parent
# Sources that cannot change a cell's numbers: the file writers, the explore package's parsing
# and presentation, and the fluid estimate (never cached: it is recomputed in milliseconds).
# Everything else under sim/ counts, including modules added later; of sim/exploration only the
# modules that compute a cell's numbers count. (The package was sim/explore when this was
# written; under its new name the whole package had been counting, so changing a plot
# recomputed every map.)
_IGNORED_DIRS = ("export", "exploration", "fluid")
_COUNTED_EXPLORE = ("summary.py", "verdict.py", "backends.py")


def _counts(relative: Path) -> bool:
    if relative.parts[0] == "exploration":
        return relative.name in _COUNTED_EXPLORE
    return relative.parts[0] not in _IGNORED_DIRS


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the simulator's sources: any change to how a cell is computed changes it."""
    digest = hashlib.sha256()
    for path in sorted(p for p in _SIM_ROOT.rglob("*.py") if _counts(p.relative_to(_SIM_ROOT))):
        digest.update(path.relative_to(_SIM_ROOT).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cell_key(spec: SimulationSpec) -> str:
    """The cache key of one cell: its full spec and the code version. Fields that are not part
    of a spec's identity (the file it came from, the key that gave its client counts, whether
    runs far beyond their estimate are stopped: a stopped run leaves no result) are left out, so
    a moved config or ``--force`` finds the same cells."""
    spec = replace(spec, source="", clients_key="clients", soft_limits=True)
    return hashlib.sha256(f"{code_version()}\n{spec!r}".encode()).hexdigest()[:32]


# An entry holds a few dozen metrics per strategy and repetition, each float about 20 bytes of
# JSON: 10 strategies x 1,000 repetitions x 40 metrics is 8 MB. Anything larger is no entry.
MAX_ENTRY_BYTES = 64 * 2**20
ENTRY_FORMAT = 2  # {"format", "sha256", "cell"}; entries of format 1 had no checksum: misses


def _checksum(key: str, cell: dict) -> str:
    """SHA-256 of the cell's key and its JSON (sorted, compact: the same text whether written
    or read back, floats round-tripping exactly, NaN as JSON's NaN)."""
    text = json.dumps(cell, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{key}\n{text}".encode()).hexdigest()


def _entry_text(key: str, result: CellResult) -> str:
    cell = result.to_json()
    return json.dumps({"format": ENTRY_FORMAT, "sha256": _checksum(key, cell), "cell": cell})


def _read_entry(key: str, text: str, spec: SimulationSpec) -> CellResult | None:
    """The entry's cell if its checksum verifies and its arrays fit ``spec``; else None."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != ENTRY_FORMAT:
        return None
    cell = data["cell"]
    if data.get("sha256") != _checksum(key, cell):
        return None
    result = CellResult.from_json(cell)
    shape = (len(spec.strategies), spec.repeat)
    if (result.labels != spec.labels or result.clients != spec.clients[0]
            or not {*metric_names(spec), *VERDICT_VALUES} <= set(result.values)
            or any(v.shape != shape for v in result.values.values())):
        return None
    return result


class CellCache:
    """A directory of ``<key>.json`` cell results; ``None`` as the directory disables it.
    With ``memory`` it also keeps every cell it saw in this process (the app reopens a map, or
    resumes a cancelled one, without reading or computing a cell twice, even with no directory)."""

    def __init__(self, directory: Path | None, *, memory: bool = False) -> None:
        self.directory = directory
        self.hits = 0
        self._memory: dict[str, CellResult] | None = {} if memory else None

    def get(self, spec: SimulationSpec) -> CellResult | None:
        key = cell_key(spec) if self.directory is not None or self._memory is not None else ""
        if self._memory is not None and key in self._memory:
            self.hits += 1
            return self._memory[key]
        if self.directory is None:
            return None
        path = self.directory / f"{key}.json"
        try:
            # A regular file of bounded size only (a FIFO would block the read, a link to
            # /dev/zero never end); whatever fails to read or parse (deep JSON's RecursionError
            # included) is a miss, computed again.
            text = read_limited(path, MAX_ENTRY_BYTES, what="cache entry").decode("utf-8")
            result = _read_entry(key, text, spec)
        except (OSError, InputFileError, ValueError, KeyError, TypeError, AttributeError, IndexError,
                RecursionError, OverflowError):
            return None
        if result is None:  # it does not verify: computed again, and put() replaces it
            return None
        self.hits += 1
        if self._memory is not None:
            self._memory[key] = result
        return result

    def remembered(self, spec: SimulationSpec) -> CellResult | None:
        """The cell if this process has already seen it (memory only: no disk, no hit counted)."""
        return None if self._memory is None else self._memory.get(cell_key(spec))

    def put(self, spec: SimulationSpec, result: CellResult) -> None:
        if self._memory is not None:
            self._memory[cell_key(spec)] = result
        if self.directory is None:
            return
        key = cell_key(spec)
        if not self.directory.is_dir():
            ensure_output_dir(self.directory, git_ignored=True, what="cache directory")  # never a source
        atomic_write_text(self.directory / f"{key}.json", _entry_text(key, result))


# --- sweeps: ``backoff-sim run``'s and the app's ------------------------------------------------
#
# A sweep's result (``SweepResult``: every run's metrics, the replying servers' series and
# latencies, the example runs the files show with their histories) is cached under the same
# kind of key as a cell (its spec and the code version, ``cell_key``), in the directory
# ``sweep_cache_dir`` names, so the app opens on ``run``'s results (and ``run`` on the app's)
# without simulating again. The result is far too large and too deep for JSON (the example
# runs' histories are ~10^6 events): an entry is a header line of JSON (format, creation time,
# SHA-256 of the key and the payload) and a pickle, read back by an unpickler that builds only
# the simulator's own classes and numpy arrays (``_SweepUnpickler``). Entries are written
# atomically (a temp file renamed into place: concurrent processes see an entry whole or not
# at all) and the directory is held under ``MAX_SWEEP_CACHE_BYTES`` by evicting the least
# recently used entries.

SWEEP_FORMAT = 1
SWEEP_SUFFIX = ".sweep"
# The pool example's result with its example histories pickles to about 40 MB; a result beyond
# this is not cached (written and read back, it would cost more than it saves).
MAX_SWEEP_ENTRY_BYTES = 1024 * 2**20
MAX_SWEEP_CACHE_BYTES = 2 * 1024 * 2**20  # the directory's sweeps in all: the oldest go first
SWEEP_CACHE_ENV = "BACKOFF_SIM_CACHE"  # a directory, or "off"
_STALE_TEMP_SECONDS = 3600.0  # a temp file this old was left by a process that was killed


def sweep_cache_dir() -> Path | None:
    """Where sweeps are cached: ``$BACKOFF_SIM_CACHE`` (``off``: nowhere), else the user's
    cache directory (``$XDG_CACHE_HOME/backoff-sim``, by default ``~/.cache/backoff-sim``):
    one place for ``run`` and the app whatever their ``--out``."""
    import os

    chosen = os.environ.get(SWEEP_CACHE_ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:  # no home directory to be found
        return None
    return root / "backoff-sim"


def sweep_key(spec: SimulationSpec) -> str:
    """A sweep's key: its spec (every field, the seed included: the config's bytes as they
    bear on this simulation) and the code version, as a cell's (``cell_key``)."""
    return hashlib.sha256(f"sweep\n{cell_key(spec)}".encode()).hexdigest()[:32]


class _SweepUnpickler:
    """Builds only what a pickled ``SweepResult`` holds: the simulator's data classes (its
    dataclasses, a history and a recorded run; never a function), numpy's arrays and dtypes, and
    a few plain builtins. An entry
    that names anything else is refused (a miss), so a file put in the cache runs no code."""

    _NUMPY = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
              ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
              ("numpy._core.multiarray", "scalar"), ("numpy.core.numeric", "_frombuffer"),
              ("numpy._core.numeric", "_frombuffer")}
    _BUILTINS = {"set", "frozenset", "complex", "slice", "range", "bytearray"}
    # A result's own classes are dataclasses (its spec, metrics, policies...) but these two.
    _SIM_CLASSES = {"sim.core.history.History", "sim.runs.engine.Run"}

    @classmethod
    def loads(cls, data: bytes):
        import io
        import pickle

        allowed = cls._allowed

        class Restricted(pickle.Unpickler):
            def find_class(self, module: str, name: str):
                found = allowed(module, name)
                if found is None:
                    raise pickle.UnpicklingError(f"{module}.{name} is not part of a sweep's result")
                return found
        return Restricted(io.BytesIO(data)).load()

    @classmethod
    def _allowed(cls, module: str, name: str):
        import builtins
        import importlib

        if module == "builtins":
            return getattr(builtins, name) if name in cls._BUILTINS else None
        if module == "collections" and name == "OrderedDict":
            from collections import OrderedDict
            return OrderedDict
        if (module, name) not in cls._NUMPY and not module.startswith("sim."):
            return None
        try:
            found = importlib.import_module(module)
            for part in name.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            return None
        if module.startswith("sim.") and not (is_dataclass(found) and isinstance(found, type)
                                              or f"{module}.{name}" in cls._SIM_CLASSES):
            return None
        return found


class SweepCache:
    """Finished sweeps on disk (``sweep_cache_dir``); ``None`` as the directory disables it.
    Nothing about it is ever an error: a directory that cannot be made or written, an entry
    that is corrupt, truncated, edited or of another version is a miss, simulated again."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.max_bytes = MAX_SWEEP_CACHE_BYTES

    @classmethod
    def default(cls, enabled: bool = True) -> SweepCache:
        """The user's cache (``sweep_cache_dir``), or none when not ``enabled`` (``--no-cache``)."""
        return cls(sweep_cache_dir() if enabled else None)

    def _path(self, spec: SimulationSpec) -> Path:
        assert self.directory is not None
        return self.directory / f"{sweep_key(spec)}{SWEEP_SUFFIX}"

    def get(self, spec: SimulationSpec):
        """``(result, created)``: the sweep of ``spec`` as cached (``SweepResult``, its spec the
        one given, so its files name this config) and when it was cached (a local
        ``datetime``); None on a miss."""
        if self.directory is None:
            return None
        from datetime import datetime

        from sim.runs.sweep import SweepResult

        key = sweep_key(spec)
        path = self._path(spec)
        try:
            raw = read_limited(path, MAX_SWEEP_ENTRY_BYTES + 4096, what="cache entry")
            header, _, payload = raw.partition(b"\n")
            meta = json.loads(header.decode("utf-8"))
            if (not isinstance(meta, dict) or meta.get("format") != SWEEP_FORMAT
                    or meta.get("sha256") != hashlib.sha256(key.encode() + b"\n" + payload).hexdigest()):
                return None
            created = datetime.fromtimestamp(float(meta["created"]))
            result = _SweepUnpickler.loads(payload)
        except Exception:  # whatever an entry holds, a miss (the checksum makes this rare)
            return None
        if not isinstance(result, SweepResult) or not _fits(result, spec):
            return None
        _touch(path)
        return _as_of(result, spec), created

    def put(self, result) -> None:
        """Cache ``result`` (a finished ``SweepResult``); quietly nothing when it cannot."""
        if self.directory is None:
            return
        import pickle
        import time

        from sim.vocabulary.errors import UserError

        spec = result.spec
        key = sweep_key(spec)
        try:
            kept = result.__class__(**{**result.__dict__, "_summary": {}})
            payload = pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a spec that does not pickle: not cached, as the sweep's workers would say
            return
        if len(payload) > MAX_SWEEP_ENTRY_BYTES:
            return
        header = json.dumps({"format": SWEEP_FORMAT, "created": time.time(),
                             "sha256": hashlib.sha256(key.encode() + b"\n" + payload).hexdigest()})
        try:
            if not self.directory.is_dir():
                ensure_output_dir(self.directory, git_ignored=True, what="cache directory")
            self._evict(len(payload))
            atomic_write_bytes(self._path(spec), header.encode() + b"\n" + payload)
        except (UserError, OSError):
            return

    def _evict(self, incoming: int) -> None:
        """Remove the least recently used entries until ``incoming`` more bytes fit the cap, and
        temp files left by killed processes. Another process may remove the same files
        meanwhile: a file already gone is no matter."""
        import time

        assert self.directory is not None
        entries = []
        now = time.time()
        for path in self.directory.iterdir():
            try:
                info = path.stat()
            except OSError:
                continue
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                if now - info.st_mtime > _STALE_TEMP_SECONDS:
                    _remove(path)
                continue
            if path.name.endswith(SWEEP_SUFFIX):
                entries.append((info.st_mtime, info.st_size, path))
        total = sum(size for _, size, _ in entries) + incoming
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            _remove(path)
            total -= size


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _touch(path: Path) -> None:
    """Mark an entry used now (eviction removes the least recently used first)."""
    import os

    try:
        os.utime(path)
    except OSError:
        pass


def _fits(result, spec: SimulationSpec) -> bool:
    """Whether a cached result's arrays have ``spec``'s shape (strategies, clients, repetitions)."""
    import numpy as np

    shape = (len(spec.strategies), len(spec.clients), spec.repeat)
    names = ("work", "duration", "gave_up", "events", "retries_denied", "amplification",
             "breaker_open_time", "calls_refused", "success_rate")
    return (result.spec.labels == spec.labels and result.spec.clients == spec.clients
            and all(isinstance(getattr(result, n), np.ndarray) and getattr(result, n).shape == shape
                    for n in names))


def _as_of(result, spec: SimulationSpec):
    """The cached result with ``spec`` (this config's: its file, its soft limits) as its spec and
    its example runs', which is what the files and tables read."""
    result.spec = spec
    for run in result.recorded.values():
        run.spec = spec
    return result


def cached_note(created) -> str:
    """What ``run`` prints and the app's status shows for a sweep read from the cache."""
    return f"results from the cache of {created:%Y-%m-%d %H:%M}; --no-cache to simulate again"
