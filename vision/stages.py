"""The reader's second-stage models, found beside its detector ``NAME.onnx``.

- the face classifier ``NAME-faces.onnx`` (:mod:`vision.faces`) reads each die's value;
- the cocked-die model ``NAME-cocked.onnx`` (:mod:`vision.cocked`) sets the cocked flags;
- the die check ``NAME-verify.onnx`` (:mod:`vision.verify`) drops boxes that are not dice.

Each comes from the reader's argument (a path; False: none; True: it must exist), else its
``DICECAM_*_MODEL`` setting, else its place beside the detector when a file is there.

Example:
    >>> from pathlib import Path
    >>> load_stage("faces", False, Path("dicecam-reader.onnx"), VisionSettings()) is None
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vision.config import VisionSettings
from vision.model_files import kept_model

__all__ = ["STAGES", "ModelError", "default_table", "load_stage", "stage_path"]


class ModelError(RuntimeError):
    """The reader model is missing, unreadable or not a dice detector dicecam understands."""


STAGES = {
    "faces": "face classifier",
    "cocked": "cocked-die model",
    "verify": "die check",
}
"""The second-stage models, by the name the reader gives them, with their name in words."""


def _beside(stage: str, detector: Path) -> Path:
    from vision.cocked import cocked_model_for
    from vision.faces import faces_model_for
    from vision.verify import verify_model_for

    beside = {"faces": faces_model_for, "cocked": cocked_model_for, "verify": verify_model_for}
    return beside[stage](detector)


def _open(stage: str, path: Path, settings: VisionSettings, threads: int) -> Any:
    from vision.faces import FACE_SURE
    from vision.table.dice import MIRROR_MARGIN

    doubtful = settings.mirror_doubtful
    if stage == "faces":
        from vision.faces import FaceClassifier

        sure = FACE_SURE if doubtful else None
        return FaceClassifier(path, threads=threads, tta=settings.faces_tta, sure=sure)
    margin = MIRROR_MARGIN if doubtful else None
    if stage == "cocked":
        from vision.cocked import CockedModel

        return CockedModel(
            path, threshold=settings.cocked_threshold, threads=threads, mirror_margin=margin
        )
    from vision.verify import VerifyModel

    return VerifyModel(
        path, threshold=settings.verify_threshold, threads=threads, mirror_margin=margin
    )


def stage_path(
    stage: str, arg: str | Path | bool | None, detector: Path, settings: VisionSettings
) -> Path | None:
    """The file of the second-stage model ``stage`` (a key of :data:`STAGES`) of ``detector``,
    or None when there is none.

    Raises:
        ModelError: the file was asked for (by ``arg`` or a setting) and is not there.
    """
    if arg is False:
        return None
    setting = getattr(settings, f"{stage}_model")
    explicit = arg not in (None, True)
    if explicit:
        path = Path(arg)  # type: ignore[arg-type]
    elif setting is not None:
        path, explicit = Path(setting), True
    else:
        path = _beside(stage, detector)
    if not path.is_file():
        if explicit or arg is True:
            raise ModelError(f"{STAGES[stage]} not found: {path}{_named_by(stage, arg, settings)}")
        return None
    return path


def _named_by(stage: str, arg: str | Path | bool | None, settings: VisionSettings) -> str:
    """`` (named by DICECAM_FACES_MODEL)`` when the setting chose the file of ``stage``, else
    nothing (the caller's argument, or the file beside the detector)."""
    if arg in (None, True) and getattr(settings, f"{stage}_model") is not None:
        return f" (named by DICECAM_{stage.upper()}_MODEL)"
    return ""


def load_stage(
    stage: str,
    arg: str | Path | bool | None,
    detector: Path,
    settings: VisionSettings,
    threads: int = 2,
) -> Any:
    """The second-stage model ``stage`` of ``detector`` (see :func:`stage_path`), loaded, or None.

    Raises:
        ModelError: it was asked for and is missing, or its file cannot be loaded.
    """
    if stage not in STAGES:
        raise ValueError(f"expected a stage in {sorted(STAGES)}, got {stage!r}")
    path = stage_path(stage, arg, detector, settings)
    if path is None:
        return None
    tuning = {"faces": settings.faces_tta, "cocked": settings.cocked_threshold}
    options = (
        stage,
        threads,
        tuning.get(stage, settings.verify_threshold),
        settings.mirror_doubtful,
    )
    try:  # once per file: dicecam serve's check at start and its first photo share it
        return kept_model(path, options, lambda: _open(stage, path, settings, threads))
    except Exception as exc:  # the runtimes' messages run over several lines
        why = " ".join(str(exc).split())
        if not why.startswith(f"cannot load {STAGES[stage]}"):
            why = f"cannot load {STAGES[stage]} {path}: {why}"
        raise ModelError(f"{why}{_named_by(stage, arg, settings)}") from None


def default_table(threads: int = 2, die_check: Any = None) -> Any:
    """The reader's table step from the settings (:meth:`vision.table.TableStage.default`), its
    models run with ``threads`` threads, with the reader's die check ``die_check``; or None when
    there is none.

    Raises:
        CalibrationError: the stored calibration file is broken (fix or delete it).
        pydantic.ValidationError: a ``DICECAM_*`` table setting that cannot be used.
        ModelError: the outline or off-table model cannot be loaded, or is of another kind.
    """
    from pydantic import ValidationError

    from vision.table import CalibrationError, SurfaceModelError, TableStage

    try:
        return TableStage.default(threads=threads, die_check=die_check)
    except (CalibrationError, ValidationError):  # a DICECAM_* setting: the CLI names it
        raise
    except (SurfaceModelError, ValueError) as exc:  # an outline or off-table model
        raise ModelError(f"table step: {exc}") from None
