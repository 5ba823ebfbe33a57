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
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from sim.exploration.summary import VERDICT_VALUES, CellResult, metric_names
from sim.export.atomic import atomic_write_text, ensure_output_dir
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
