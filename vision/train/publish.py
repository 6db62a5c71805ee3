"""Where a fine-tuned model goes, and putting it there whole.

A fine-tuning run makes its model and companions in its work folder; :func:`publish` puts them
into ``--out`` together at the end, so that ``--out`` holds either the earlier model of that name
or the new one, never a detector beside another run's face classifier (see :func:`publish`).

Example:
    >>> fine_tuned_model(Path("models/dicecam-reader.onnx"), None, None).name
    'dicecam-reader-ft.onnx'
"""

from __future__ import annotations

import errno
import re
import shutil
import tempfile
from pathlib import Path

from vision.atomic import (
    WRITTEN_BY,
    atomic_copy,
    fsync_dir,
    replace_file,
    writer,
    writer_gone,
)

__all__ = ["COMPANIONS", "fine_tuned_model", "model_set_files", "publish", "said", "stale_folders"]


def fine_tuned_model(base: Path, out: Path | None, name: str | None) -> Path:
    """Where ``dicecam train --from BASE [--out OUT] [--name NAME]`` writes its model:
    ``OUT/NAME.onnx``, by default ``runs/finetune/BASE-ft.onnx`` (resolved)."""
    return ((out or Path("runs/finetune")) / f"{name or f'{base.stem}-ft'}.onnx").resolve()


COMPANIONS = ("", "-faces", "-cocked", "-verify")
"""The files of a model ``NAME``: ``NAME`` + one of these + ``.onnx``, ``.pt``, ``.md`` or
``.json`` (the detector, its face classifier, cocked-die model and die check, the card)."""


def model_set_files(folder: Path, name: str) -> list[Path]:
    """The files of the model ``name`` in ``folder`` that are there: the detector and each of
    its :data:`COMPANIONS`, as ONNX, checkpoint, card and sidecar."""
    return [
        folder / f"{name}{part}{ext}"
        for part in COMPANIONS
        for ext in (".onnx", ".pt", ".md", ".json")
        if (folder / f"{name}{part}{ext}").is_file()
    ]


def said(exc: KeyboardInterrupt | OSError, note: str) -> KeyboardInterrupt | OSError:
    """``exc`` with ``note`` (what was left where) in the line ``dicecam`` prints of it: a
    KeyboardInterrupt saying ``note``; an OSError of the same errno saying its reason, its file
    and ``note``.

    Example:
        >>> print(said(OSError(errno.ENOSPC, "No space left on device", "m.onnx"), "out kept"))
        [Errno 28] No space left on device: m.onnx; out kept
    """
    if isinstance(exc, KeyboardInterrupt):
        return KeyboardInterrupt(note)
    if exc.errno is None:  # a library's OSError("disk full")
        return OSError(f"{exc}; {note}")
    where = f": {exc.filename}" if exc.filename is not None else ""
    return OSError(exc.errno, f"{exc.strerror}{where}; {note}")


def publish(stage: Path, out: Path, name: str) -> list[Path]:
    """Put the finished model ``name`` made in ``stage`` into ``out`` and return its files there.

    Two steps. First every file is moved (copied, from another disk) into a hidden folder of
    this publish in ``out``, ``.NAME.PID-MACHINE.RANDOM.publish`` (:func:`vision.atomic.writer`):
    stopped there (Ctrl-C, a full disk), ``out`` is as it was. Then renames within ``out``: the
    earlier detector ``NAME.onnx``, which selects the model, is removed first, then the earlier
    model's files this run did not make (a die check the new model has none of), and the new
    files go in, the detector last. Stopped there, ``out`` holds no model ``name`` rather than a
    mixed one. The error says which (:func:`said`); the hidden folder is
    removed.

    A publish killed outright (SIGKILL, a power cut) leaves its hidden folder; the next publish
    of ``name`` into ``out`` removes those of publishes no longer running (:func:`stale_folders`).
    Another publish of ``name`` running at the same time keeps its own folder (each has one),
    so neither removes the other's files; only their renames into ``out``, the second step, must
    not overlap (nothing locks it: run one publish of a name at a time).
    """
    detector = f"{name}.onnx"
    made = sorted((f for f in stage.iterdir() if f.is_file()), key=lambda f: f.name == detector)
    if not made or made[-1].name != detector:
        raise FileNotFoundError(f"expected the fine-tuned model {stage / detector}, got none")
    out.mkdir(parents=True, exist_ok=True)
    for stale in stale_folders(out, name):
        shutil.rmtree(stale, ignore_errors=True)
    earlier = (out / detector).is_file()
    incoming: Path | None = None
    try:
        incoming = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}.{writer()}.", suffix=".publish"))
        for f in made:
            _move(f, incoming / f.name)
        (out / detector).unlink(missing_ok=True)  # from here on no model is selectable
        for old in model_set_files(out, name):
            if not (incoming / old.name).is_file():
                old.unlink()
        for f in made:  # the detector last
            replace_file(incoming / f.name, out / f.name)
    except (KeyboardInterrupt, OSError) as exc:
        if earlier and not (out / detector).is_file():  # said by what is on disk
            note = (
                f"{out} holds no model {name} now: the earlier one was taken out and this "
                "run's was not put in whole; the same command makes it again"
            )
        else:
            note = f"{out} left as it was (no model of this run there)"
            note += "; the same command starts again"
        raise said(exc, note) from exc
    finally:
        if incoming is not None:
            shutil.rmtree(incoming, ignore_errors=True)
    fsync_dir(out)
    return [out / f.name for f in made]


def stale_folders(out: Path, name: str) -> list[Path]:
    """The hidden folders of publishes of ``name`` into ``out`` that no longer run: those of
    processes of this machine that are gone (:func:`vision.atomic.writer_gone`), and
    ``.NAME.publish``, the one folder every publish shared before each had its own (a publish
    of those versions removed it as it began, so a stopped one's was nobody's). A running
    publish's folder, another machine's and, on Windows, every one named by its writer stay.
    """
    mine = re.compile(re.escape(f".{name}.") + rf"(?:{WRITTEN_BY}\.)?publish")
    stale = []
    for folder in out.iterdir() if out.is_dir() else ():
        found = mine.fullmatch(folder.name)
        if found is None or not folder.is_dir() or folder.is_symlink():
            continue
        if found["pid"] is None or writer_gone(int(found["pid"]), found["machine"]):
            stale.append(folder)
    return sorted(stale)


def _move(src: Path, dst: Path) -> None:
    """``src`` to ``dst`` in one step; from another disk, a whole copy, then ``src`` removed."""
    try:
        replace_file(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        atomic_copy(src, dst)
        src.unlink()
