"""Atomic file writes: a process killed (or a disk that fills) halfway leaves the old file.

Every file a user cares about (a shipped model, its card, the calibration, the outbox of turns,
the labels of a folder of photos) is written to a temporary file beside it, flushed to disk, then
put in place with ``os.replace``, so the path holds either the old content or the new one, never
half of it. A failed write removes its temporary file and raises; the old file is untouched.
A killed writer cannot remove its temporary file: its name holds the writer's process id and
machine, and the next write into that folder removes those of writers no longer running there
(:func:`remove_dead_temporaries`).

Example:
    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> card = atomic_write(Path(folder.name) / "card.md", "# dicecam-reader\\n")
    >>> card.read_text()
    '# dicecam-reader\\n'
    >>> with replacing(card) as part:  # for a library that writes to a path (onnx.save)
    ...     _ = part.write_text("# half a card")
    ...     raise OSError("disk full")
    Traceback (most recent call last):
    OSError: disk full
    >>> card.read_text(), sorted(p.name for p in Path(folder.name).iterdir())
    ('# dicecam-reader\\n', ['card.md'])
    >>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "WRITTEN_BY",
    "atomic_copy",
    "atomic_write",
    "file_lock",
    "fsync_dir",
    "link_name",
    "process_running",
    "remove_dead_temporaries",
    "replace_file",
    "replacing",
    "write_failure",
    "writer",
    "writer_gone",
]

WINDOWS = os.name == "nt"
REPLACE_TRIES = 10
"""Tries of :func:`replace_file` on Windows, 10 ms apart and doubling up to 1 s (3.3 s in all)."""


def replace_file(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """``os.replace(src, dst)``; on Windows tried again for a few seconds while ``dst`` is held
    open by another process (a virus scanner, an indexer, a reader of the old file), which
    makes Windows refuse the replace with ``PermissionError``. Elsewhere a single try.
    """
    for n in range(REPLACE_TRIES):
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if not WINDOWS or n == REPLACE_TRIES - 1:
                raise
            time.sleep(min(0.01 * 2**n, 1.0))


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a rename in it survives a power cut); best effort."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that cannot sync a folder
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock file ``path`` (made if missing) for the block: one holder at a time,
    across threads and processes, each waiting its turn. The operating system lets go of it
    when its holder dies: ``flock`` on POSIX, ``msvcrt.locking`` of its first byte on Windows.
    """
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows
            with _msvcrt_locked(fd):
                yield
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield  # os.close lets go of the lock
    finally:
        os.close(fd)


@contextlib.contextmanager
def _msvcrt_locked(fd: int) -> Iterator[None]:
    """``msvcrt.locking`` of the first byte of ``fd``: its ``LK_LOCK`` gives up after ten tries
    a second apart (OSError), so it is tried again until it holds; unlocked before the file is
    closed, as Windows lets go of a closed file's locks only in its own time."""
    import msvcrt

    while True:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
            break
        except OSError:  # held by another for over ten seconds: wait on
            continue
    try:
        yield
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def process_running(pid: int) -> bool:
    """Whether the process ``pid`` runs on this machine (POSIX; one of another user's counts as
    running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: there, not ours
        return True
    return True


@functools.cache
def _machine() -> str:
    """8 hex digits naming this machine's processes: its host name and process-id namespace (a
    container of its own has other processes under the same ids)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return hashlib.sha256(f"{socket.gethostname()}:{namespace}".encode()).hexdigest()[:8]


WRITTEN_BY = r"(?P<pid>[0-9]+)-(?P<machine>[0-9a-f]{8})\.[a-z0-9_]{8}"
"""``PID-MACHINE.RANDOM`` in the name of a temporary file or folder (:func:`writer` and 8
random characters), as a regular expression whose groups ``pid`` and ``machine`` are given to
:func:`writer_gone`."""

TEMPORARY = re.compile(rf"\..+\.{WRITTEN_BY}\.tmp")
"""A temporary file of :func:`replacing`: ``.NAME.PID-MACHINE.RANDOM.tmp``."""


def writer() -> str:
    """``PID-MACHINE``: this process, as the name of a temporary file or folder of its own
    says who made it (:func:`writer_gone` tells a later process whether that one still runs)."""
    return f"{os.getpid()}-{_machine()}"


def writer_gone(pid: int, machine: str) -> bool:
    """Whether the :func:`writer` ``pid``-``machine`` is a process of this machine that no
    longer runs (killed: SIGKILL, a power cut), so what it left is nobody's. False for this
    process, a running one, another machine's and, on Windows (no process looked up), any."""
    if os.name != "posix" or machine != _machine() or pid == os.getpid():
        return False
    return not process_running(pid)


_swept: set[str] = set()
_swept_lock = threading.Lock()


def remove_dead_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of :func:`replacing` in ``folder`` whose writer, a process of
    this machine, no longer runs (killed: SIGKILL, a power cut); returns them. Those of running
    processes (this one's too) and of other machines sharing the folder stay; on Windows, where
    no process is looked up, every one stays. :func:`replacing` calls it once per folder and
    process."""
    if os.name != "posix":
        return []
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:  # a folder that is not there (yet) holds none
        return []
    for entry in entries:
        found = TEMPORARY.fullmatch(entry.name)
        if found is None or not writer_gone(int(found["pid"]), found["machine"]):
            continue
        with contextlib.suppress(OSError):  # gone meanwhile (another sweeper), not ours to remove
            if entry.is_file(follow_symlinks=False) or entry.is_symlink():  # (a link of link_name)
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _sweep_once(folder: Path) -> None:
    """:func:`remove_dead_temporaries` of ``folder``, the first time this process writes there."""
    key = f"{os.getpid()}:{os.path.abspath(folder)}"
    with _swept_lock:
        if key in _swept:
            return
        _swept.add(key)
    remove_dead_temporaries(folder)


def link_name(path: str | os.PathLike[str]) -> Path:
    """A new name beside ``path`` for a link to be put in its place, named as the temporary
    files of :func:`replacing` (``.NAME.PID-MACHINE.RANDOM.tmp``): one a killed process left is
    removed by a later process's first write into the folder (:func:`remove_dead_temporaries`),
    as its first call of this for the folder does."""
    path = Path(path)
    _sweep_once(path.parent)
    return path.with_name(f".{path.name}.{writer()}.{secrets.token_hex(4)}.tmp")


def _fsync_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError), open(path, "rb+") as f:
        os.fsync(f.fileno())


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str], *, sync: bool = True, mode: int | None = None
) -> Iterator[Path]:
    """A temporary path beside ``path`` to write the new file to; it replaces ``path`` when the
    block ends without an error, else it is removed and ``path`` keeps its old content.

    Its name starts with a dot and ends in ``.tmp``, so that nothing that globs for the real
    files (``*.onnx``, ``*.json``) picks up a leftover of a killed process, and holds this
    process's id and machine: the first write of a later process into the folder removes it
    (:func:`remove_dead_temporaries`). ``sync=False`` skips
    the flushes to disk (a power cut may then leave an empty file; a killed process still
    cannot leave half a file). A new file gets ``mode`` (default: as ``open`` would make it,
    by the umask); a replaced one keeps its permissions.
    """
    path = Path(path)
    _sweep_once(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{writer()}.", suffix=".tmp")
    os.close(fd)
    part = Path(tmp)
    try:
        yield part
        if sync:
            _fsync_file(part)
        with contextlib.suppress(FileNotFoundError):  # keep the old file's permissions
            os.chmod(part, os.stat(path).st_mode & 0o7777)
        if not path.exists():
            os.chmod(part, (0o666 & ~_umask()) if mode is None else mode)
        replace_file(part, path)
    except BaseException as exc:
        # name the file the user knows, not our temporary one (nor the source of a copy)
        failure = write_failure(exc, path, written=part)
        part.unlink(missing_ok=True)
        if failure is None or failure is exc:
            raise
        raise failure from exc
    if sync:
        fsync_dir(path.parent)


WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errors of a write that stopped part way: a full disk, a quota, a file-size limit, the disk."""

FULL_BELOW = 1 << 20
"""Free bytes under which a disk counts as full when a write failed without saying why."""

TORCH_WRITE_FAILED = ("PytorchStreamWriter failed writing", "unexpected pos")
"""What torch.save's RuntimeError says when the file it writes cannot take its bytes."""


def write_failure(
    exc: BaseException, path: str | os.PathLike[str], *, written: str | os.PathLike[str] = ""
) -> OSError | None:
    """The OSError that says why writing ``path`` failed with ``exc``, naming ``path``; None
    when ``exc`` is no failed write (raise it as it is).

    - an OSError naming no file, or ``written`` (the temporary file ``path`` is written as):
      ``exc`` itself, naming ``path``; one of ``shutil.copyfile``, which names its source and
      then ``written``, names ``path`` alone. One with a message only (PIL's "cannot write mode
      RGBA as JPEG") or naming another file is ``exc`` as it is.
    - torch.save's RuntimeError of a file it could not write ("unexpected pos", "PytorchStreamWriter
      failed writing"): the OSError it was raised over (torch writing a Python file: ENOSPC),
      else (torch writing the path itself) ENOSPC when the disk holding ``path`` is full, under
      :data:`FULL_BELOW` free, or an I/O error with torch's message.

    Example:
        >>> write_failure(RuntimeError("unexpected pos 576 vs 534"), "/nowhere/m.pt").filename
        '/nowhere/m.pt'
        >>> write_failure(ValueError("no"), "m.pt") is None
        True
    """
    ours = {str(written)} if written else set()
    if isinstance(exc, OSError):
        if exc.strerror is None:  # a message only
            return exc
        if exc.filename2 is not None and str(exc.filename2) in ours:  # shutil's sendfile copy
            return type(exc)(exc.errno, exc.strerror, str(path))  # filename2 = None: "-> None"
        if exc.filename is None or str(exc.filename) in ours:
            exc.filename = str(path)
        return exc
    if not isinstance(exc, RuntimeError) or not any(s in str(exc) for s in TORCH_WRITE_FAILED):
        return None
    cause = exc.__context__
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__context__
    if cause is not None and cause.errno is not None:
        return OSError(cause.errno, cause.strerror, str(path))
    if _free_bytes(Path(path)) < FULL_BELOW:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return OSError(errno.EIO, f"{os.strerror(errno.EIO)} ({exc})", str(path))


def _free_bytes(path: Path) -> int:
    """Bytes free on the disk holding ``path`` (the nearest folder of it that exists)."""
    import shutil

    for folder in (path, *path.parents):
        with contextlib.suppress(OSError):
            return shutil.disk_usage(folder).free
    return FULL_BELOW  # pragma: no cover - no folder above it at all


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, for a moment, for
    every thread of a server); 0o022 where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def atomic_write(
    path: str | os.PathLike[str], data: bytes | str, *, sync: bool = True, mode: int | None = None
) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`replacing`); returns the path. Text is
    written as UTF-8, its line ends as given (``\\n`` on every platform), and a file name
    Python holds with surrogates (its bytes not UTF-8, ``os.fsdecode``) as its own bytes."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    with replacing(path, sync=sync, mode=mode) as part, open(part, "wb") as f:
        f.write(raw)
    return Path(path)


def atomic_copy(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], *, sync: bool = True
) -> Path:
    """Copy the file ``src`` to ``dst`` atomically (``shutil.copyfile``'s bytes); returns dst.
    ``sync`` as for :func:`replacing`."""
    import shutil

    with replacing(dst, sync=sync) as part:
        shutil.copyfile(src, part)
    return Path(dst)
