"""Output sets: all of a command's files appear together, or none of them do.

Files are written into a staging folder inside the output directory (same file system, so moving
them is a rename), and only when every one of them is complete are they moved into place, in one
short step that stop signals cannot split (the caller's ``hold_stops``, ``sim.runs.caller``) and
that is undone if a move fails. A failure before
that (a full disk, Ctrl-C, a bad second simulation) leaves the previous files untouched; the
staging folder is removed on the way out. A lock file (``.backoff-sim.lock``, present while a
command writes) keeps a second command from writing into the same directory at the same time: it
is refused at once, naming the holder.

``output_set`` is the one place every front end (``run``, the drop-in, ``explore``, ``phase``,
the Python API, the app's export) locks, stages and commits a set: a block writes into its
staging folder and names what it wrote; the set is committed when the block ends without an
error, never otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sim.vocabulary.errors import UserError
from sim.export.atomic import ensure_output_dir
from sim.runs.caller import caller

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".backoff-sim.lock"
STAGING_PREFIX = ".backoff-sim-staging-"
_STAGING = re.compile(re.escape(STAGING_PREFIX) + r"(\d+)-")


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class Staging:
    """What a block writes into an output set: the folder to write in (``dir``), the files to
    move into place and the old ones to remove (``add``); ``written`` once it is committed."""

    def __init__(self, output: OutputSet) -> None:
        self._output = output
        self.names: list[str] = []
        self.stale: list[str] = []
        self.written: list[Path] = []

    @property
    def dir(self) -> Path:
        return self._output.staging

    @property
    def out_dir(self) -> Path:
        return self._output.out_dir

    def add(self, paths: Iterable[Path], remove: Iterable[str] = ()) -> None:
        """Commit the staged ``paths`` (by name) with the set, and remove the old files
        ``remove`` (an earlier set's, which this one no longer writes)."""
        self.names += [p.name for p in paths]
        self.stale += list(remove)


@contextmanager
def output_set(out_dir: str | Path, *, last: bool = False) -> Iterator[Staging]:
    """Lock ``out_dir``, let the block stage its files, and commit them all at once when it
    ends without an error (an error or a stop leaves the previous files untouched and nothing
    staged behind). ``last``: the commit is the command's last step (``OutputSet.commit``)."""
    with OutputSet(out_dir) as output:
        staging = Staging(output)
        yield staging
        staging.written = output.commit(staging.names, remove=staging.stale, last=last)


class OutputSet:
    """A context manager: lock ``out_dir``, stage files in ``staging``, ``commit`` them together."""

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.staging: Path = self.out_dir
        self._lock_fd: int | None = None
        self._emergency = 0

    def __enter__(self) -> OutputSet:
        # The lock, the staging folder and their clean-up's registration are one step a stop
        # signal cannot split: one landing between them (``run``'s stop "at any moment" test,
        # sent as soon as the folder appeared) left the folder behind, as ``__exit__`` never
        # runs for a ``__enter__`` that raised. A stop held until the step's end, or an error,
        # undoes it all here.
        try:
            with caller().hold_stops():
                ensure_output_dir(self.out_dir)
                self._lock()
                try:
                    self._remove_stale_staging()
                    self.staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-",
                                                         dir=self.out_dir))
                except OSError as exc:
                    raise UserError(f"output directory {self.out_dir}: cannot write there: {_why(exc)} "
                                    "(choose another output directory)") from None
                # Should the process be ended by the exit deadline before ``__exit__`` runs (the
                # app's export thread, when the terminal goes away), the staged files and the
                # lock go too.
                self._emergency = caller().on_abandon(self._abandon)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._emergency:
            caller().forget(self._emergency)
            self._emergency = 0
        self._abandon()

    def _abandon(self) -> None:
        try:
            if self.staging != self.out_dir:
                shutil.rmtree(self.staging, ignore_errors=True)
        finally:
            self._unlock()

    # --- the lock ----------------------------------------------------------------------------

    def _lock(self) -> None:
        """Take the directory's lock file, or refuse at once naming its holder. The file is
        removed on release, so a lock taken on a file just unlinked by its previous holder is
        retried on the new one (the inode check)."""
        if fcntl is None:  # pragma: no cover
            return
        path = self.out_dir / LOCK_NAME
        for _ in range(10):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise UserError(f"output directory {self.out_dir}: cannot create its lock file: "
                                f"{_why(exc)} (choose another output directory)") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
                os.close(fd)
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise UserError(f"output directory {self.out_dir}: another backoff-sim is writing "
                                f"there{who}; wait for it to finish or choose another output "
                                "directory") from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode("ascii"))
                self._lock_fd = fd
                return
            os.close(fd)
        raise UserError(f"output directory {self.out_dir}: its lock file keeps changing; "
                        "wait for the other backoff-sim to finish")  # pragma: no cover

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            try:
                os.unlink(self.out_dir / LOCK_NAME)  # while still holding it: see _lock
            except OSError:
                pass
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def _remove_stale_staging(self) -> None:
        """Staging folders of commands that were killed (SIGKILL, power loss) are left behind.
        A command stages only while it holds the lock, so under the lock every staging folder
        is stale, whatever its pid says: pids are reused (in a container every command may be
        pid 1), and a folder named after a live process was kept forever. Without a lock (no
        fcntl), only those whose process is gone are removed."""
        for entry in self.out_dir.iterdir():
            match = _STAGING.match(entry.name)
            if not match or not entry.is_dir():
                continue
            if self._lock_fd is not None or not _alive(int(match.group(1))):
                shutil.rmtree(entry, ignore_errors=True)

    # --- the commit --------------------------------------------------------------------------

    def commit(self, names: Iterable[str], remove: Iterable[str] = (), *, last: bool = False) -> list[Path]:
        """Move the staged files ``names`` into the output directory and delete the old files
        ``remove`` (left by an earlier set of the same simulation), all or nothing; return the
        final paths. ``last``: the command's last step (the commands' main thread): once the set
        is in place the command has succeeded, so a stop signal held during the moves, or one
        arriving later, is dropped instead of reporting 130 for files that were written."""
        names = list(names)
        remove = [n for n in remove if n not in names and (self.out_dir / n).exists()]
        backup = self.staging / ".previous"
        with caller().hold_stops():
            try:
                backup.mkdir()
                for name in names + remove:
                    target = self.out_dir / name
                    if target.exists():
                        _preserve(target, backup / name)
            except OSError as exc:
                raise UserError(f"cannot write to {self.out_dir}: {_why(exc)}") from None
            done: list[str] = []
            try:
                for name in names:
                    os.replace(self.staging / name, self.out_dir / name)
                    done.append(name)
                for name in remove:
                    os.unlink(self.out_dir / name)
                    done.append(name)
            except OSError as exc:
                _roll_back(self.out_dir, backup, done)
                raise UserError(f"cannot write to {self.out_dir}: {_why(exc)} "
                                "(the previous files are unchanged)") from None
            if last:
                caller().settled()  # still deferred: a pending stop is discarded
        return [self.out_dir / name for name in names]


def _preserve(target: Path, copy: Path) -> None:
    """A copy of the old file to restore on failure: a hard link when the file system has them."""
    try:
        os.link(target, copy)
    except OSError:
        shutil.copy2(target, copy)


def _roll_back(out_dir: Path, backup: Path, done: list[str]) -> None:
    for name in reversed(done):
        target = out_dir / name
        try:
            if (backup / name).exists():
                os.replace(backup / name, target)
            else:
                target.unlink(missing_ok=True)
        except OSError:  # pragma: no cover - best effort; the error is reported anyway
            pass
