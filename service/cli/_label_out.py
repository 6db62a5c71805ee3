"""Where ``dicecam label`` and ``dicecam labels import|convert`` write their ``--out``: a new
(or empty) one is written in a hidden folder beside it and put in place whole; one with files
in it already (``--overwrite``) is written in place, an ``unfinished.txt`` in it until the run
is done. What a killed run left is said by the next run into the same ``--out``."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["UNFINISHED", "staged"]

UNFINISHED = "unfinished.txt"
"""In an ``--out`` written in place while the run writes it; left by a run stopped part way."""


@contextlib.contextmanager
def staged(out: Path, command: str) -> Iterator[Path]:
    """A hidden folder beside a new (or empty) ``out`` to write into, put in place as ``out``
    when the block ends: a run stopped before (Ctrl-C, a full disk, a refused label) leaves no
    half-written ``out``, and a failed write is said at its place in ``out`` (the staging
    folder is gone by then). An ``out`` with files in it already (``--overwrite``) is written
    in place (:func:`_in_place`). The staging folder a killed run left is removed, said on
    stderr by ``command``."""
    from vision.atomic import replace_file

    for stage, pid in _remove_dead_stages(out):
        print(
            f"{command}: removed {stage}, the unfinished output of an earlier run (process "
            f"{pid}) stopped before it was done; none of it had reached --out {out}: this run "
            "writes it all",
            file=sys.stderr,
        )
    if out.is_dir() and any(out.iterdir()):
        with _in_place(out, command):
            yield out
        return
    made = [folder for folder in out.parents if not folder.exists()]  # by --out new/sub/out
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.parent / f".{out.name}.{os.getpid()}.partial"
    shutil.rmtree(stage, ignore_errors=True)  # a killed run's of this id, where none is said
    stage.mkdir()
    try:
        yield stage
        if out.is_dir():
            out.rmdir()  # empty: checked above
        replace_file(stage, out)
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        for folder in made:  # innermost first; one a concurrent run wrote into stays
            with contextlib.suppress(OSError):
                folder.rmdir()
        said = _said_in_out(exc, stage, out) if isinstance(exc, OSError) else None
        if said is not None:
            raise said from exc
        raise


def _remove_dead_stages(out: Path) -> list[tuple[Path, int]]:
    """Remove the staging folders ``.OUT.PID.partial`` beside ``out`` of runs killed before
    they put theirs in place (SIGKILL, a power cut): a copy of the photos each; returns them
    with their process ids. One whose process still runs stays; one of this process's id is a
    killed run's (ids come round again: in a container every run may be PID 1), as this run
    has made none yet. On Windows, where no process is looked up, every one stays."""
    from vision.atomic import process_running

    removed: list[tuple[Path, int]] = []
    if os.name != "posix" or not out.parent.is_dir():
        return removed
    prefix = f".{out.name}."
    for stage in out.parent.iterdir():
        pid = stage.name[len(prefix) : -len(".partial")]
        if not (stage.name.startswith(prefix) and stage.name.endswith(".partial")):
            continue
        if not pid.isdigit() or (int(pid) != os.getpid() and process_running(int(pid))):
            continue
        shutil.rmtree(stage, ignore_errors=True)
        if not stage.exists():
            removed.append((stage, int(pid)))
    return removed


def _said_in_out(exc: OSError, stage: Path, out: Path) -> OSError | None:
    """``exc``, raised writing a file in ``stage``, naming that file at its place in ``out``
    (the folder the user gave) and saying what was left behind; None when it names no such
    file (a photo that could not be read)."""
    names = [Path(os.fsdecode(f)) for f in (exc.filename, exc.filename2) if f is not None]
    where = next((out / n.relative_to(stage) for n in names if n.is_relative_to(stage)), None)
    if where is None or exc.strerror is None:
        return None
    left = f"{stage} is left, delete it" if stage.exists() else "nothing was left behind"
    kept = f"--out {out} is as it was" if out.exists() else f"--out {out} was not made"
    return type(exc)(exc.errno, f"{exc.strerror}: {where} ({kept}; {left})")


@contextlib.contextmanager
def _in_place(out: Path, command: str) -> Iterator[Path]:
    """``out`` itself to write into, with an :data:`UNFINISHED` note in it until the block ends
    without an error: a run stopped part way (SIGKILL, a full disk) leaves files of two runs
    in ``out`` and the note saying so, and the next run into ``out`` says that it writes it all
    again. A run that ends with an error before it changed a file in ``out`` (a label the
    writer refuses) leaves ``out`` as it was, the note of an earlier run's too."""
    from vision.atomic import atomic_write

    note = out / UNFINISHED
    earlier = note.read_bytes() if note.is_file() else None
    if earlier is not None:
        print(
            f"{command}: --out {out} holds the output of an earlier run stopped before it was "
            f"done ({UNFINISHED} in it): this run writes it all again",
            file=sys.stderr,
        )
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    atomic_write(
        note,
        f"{command} was writing this folder (process {os.getpid()}, from {started}) and "
        "stopped before it was done: some files here may still be an earlier run's. Run the "
        "same command again (with --overwrite) to write them all; this file goes when a run "
        "is done.\n",
    )
    before = _state(out)
    try:
        yield out
    except BaseException:
        if _state(out) == before:  # nothing written, nothing removed: out is as it was
            if earlier is None:
                note.unlink(missing_ok=True)
            else:
                atomic_write(note, earlier)
        raise
    note.unlink(missing_ok=True)


def _state(out: Path) -> dict[str, tuple[int, int, int]]:
    """Every file and folder under ``out`` but the note, with its inode, and a file's size and
    change time: a file written, replaced or removed changes it (a folder's own times change
    with a temporary file made and removed again, which leaves ``out`` as it was)."""
    found: dict[str, tuple[int, int, int]] = {}
    for folder, dirs, files in os.walk(out):
        for names, is_dir in ((dirs, True), (files, False)):
            for name in names:
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):  # gone meanwhile: missing from the state
                    st = os.lstat(path)
                    kept = (0, 0) if is_dir else (st.st_size, st.st_mtime_ns)
                    found[os.path.relpath(path, out)] = (st.st_ino, *kept)
    found.pop(UNFINISHED, None)
    return found
