"""Where a fine-tuned model goes, and putting it there whole.

A fine-tuning run makes its model and companions in its work folder; :func:`publish` moves them
into ``--out`` together at the end, so a run stopped halfway never leaves a new detector beside
an earlier run's face classifier.

Example:
    >>> fine_tuned_model(Path("models/dicecam-reader.onnx"), None, None).name
    'dicecam-reader-ft.onnx'
"""

from __future__ import annotations

import errno
from pathlib import Path

from vision.atomic import atomic_copy, replace_file

__all__ = ["COMPANIONS", "fine_tuned_model", "publish"]


def fine_tuned_model(base: Path, out: Path | None, name: str | None) -> Path:
    """Where ``dicecam train --from BASE [--out OUT] [--name NAME]`` writes its model:
    ``OUT/NAME.onnx``, by default ``runs/finetune/BASE-ft.onnx`` (resolved)."""
    return ((out or Path("runs/finetune")) / f"{name or f'{base.stem}-ft'}.onnx").resolve()


COMPANIONS = ("", "-faces", "-cocked", "-verify")
"""The files of a model ``NAME``: ``NAME`` + one of these + ``.onnx``, ``.pt``, ``.md`` or
``.json`` (the detector, its face classifier, cocked-die model and die check, the card)."""


def _model_files(folder: Path, name: str) -> list[Path]:
    return [
        folder / f"{name}{part}{ext}"
        for part in COMPANIONS
        for ext in (".onnx", ".pt", ".md", ".json")
        if (folder / f"{name}{part}{ext}").is_file()
    ]


def publish(stage: Path, out: Path, name: str) -> list[Path]:
    """Put the finished model ``name`` made in ``stage`` into ``out`` and return its files there.

    An earlier model of that name in ``out`` is replaced whole: its files this run did not make
    (a die check the new model has none of) are removed, so the reader never mixes the two.
    Each file is moved in one step; the detector ``NAME.onnx``, which selects the model, last.
    """
    out.mkdir(parents=True, exist_ok=True)
    made = sorted(
        (f for f in stage.iterdir() if f.is_file()), key=lambda f: f.name == f"{name}.onnx"
    )
    if not any(f.name == f"{name}.onnx" for f in made):
        raise FileNotFoundError(f"expected the fine-tuned model {stage / name}.onnx, got none")
    for old in _model_files(out, name):
        if not (stage / old.name).is_file():
            old.unlink()
    placed = []
    for f in made:
        try:
            replace_file(f, out / f.name)
        except OSError as exc:  # the work folder on another disk: a whole copy, then in place
            if exc.errno != errno.EXDEV:
                raise
            atomic_copy(f, out / f.name)
        placed.append(out / f.name)
    return placed
