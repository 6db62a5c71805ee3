"""Vision settings, read from ``DICECAM_*`` environment variables.

Example:
    >>> import os
    >>> os.environ["DICECAM_CONF"] = "0.4"
    >>> VisionSettings().conf
    0.4
    >>> del os.environ["DICECAM_CONF"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from vision.model_files import check_model_file

__all__ = [
    "CHECKOUT",
    "DEFAULT_MODEL",
    "MODELS_DIR",
    "STRIDE",
    "VisionSettings",
    "check_imgsz",
    "check_model_file",
    "get_vision_settings",
    "shipped_folder",
]

_PACKAGE = Path(__file__).resolve().parent

CHECKOUT = _PACKAGE.parent if (_PACKAGE.parent / "pyproject.toml").is_file() else None
"""The repository dicecam runs from (a clone, an editable install); None once installed."""


def shipped_folder(installed: str, checkout: str) -> Path:
    """A folder of files dicecam ships: ``vision/<installed>`` where a wheel puts it, else
    ``<repo>/<checkout>`` of the repository it runs from (setup.py maps one to the other)."""
    inside = _PACKAGE / installed
    return inside if inside.is_dir() or CHECKOUT is None else CHECKOUT / checkout


MODELS_DIR = shipped_folder("shipped_models", "models")
"""The shipped models and their cards: ``vision/shipped_models/`` installed, else ``models/``."""

DEFAULT_MODEL = MODELS_DIR / "dicecam-reader.onnx"
"""The shipped reader model: ``models/dicecam-reader.onnx`` (see :data:`MODELS_DIR`)."""

STRIDE = 32
"""The stride of dicecam's detectors: the first look's size is a multiple of it."""


def check_imgsz(size: int) -> int:
    """``size`` if a detector of :data:`STRIDE` can read at it, else ValueError saying so (the
    caller says what came: a setting's error adds it)."""
    if size < STRIDE or size % STRIDE:
        raise ValueError(
            f"expected an input size that is a multiple of the model's stride {STRIDE}"
        )
    return size


class VisionSettings(BaseSettings):
    """Defaults for :class:`vision.DiceReader` and image loading; every field has a default."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    model: Path = Field(DEFAULT_MODEL, description="ONNX reader model (DICECAM_MODEL)")
    faces_model: Path | None = Field(
        None, description="face classifier ONNX (default: NAME-faces.onnx beside the model)"
    )
    faces_tta: bool = Field(
        True, description="face classifier reads each die and its mirror image (DICECAM_FACES_TTA)"
    )
    mirror_doubtful: bool = Field(
        True,
        description="the face classifier, die check and cocked-die model read a die's mirror "
        "image only when its crop alone leaves the call in doubt (False: every die, as before "
        "2026-11-28; DICECAM_MIRROR_DOUBTFUL)",
    )
    cocked_model: Path | None = Field(
        None, description="cocked-die model ONNX (default: NAME-cocked.onnx beside the model)"
    )
    cocked_threshold: float | None = Field(
        None,
        gt=0.0,
        lt=1.0,
        description="probability from which a die is cocked (default: the model's own)",
    )
    verify_model: Path | None = Field(
        None, description="die check ONNX (default: NAME-verify.onnx beside the model)"
    )
    verify_threshold: float | None = Field(
        None,
        gt=0.0,
        lt=1.0,
        description="boxes less likely than this to hold a die are dropped (default: the "
        "model's own)",
    )
    conf: float = Field(0.25, ge=0.0, le=1.0, description="minimum die confidence")
    iou: float = Field(0.5, gt=0.0, le=1.0, description="class-agnostic NMS IoU threshold")
    imgsz: int | None = Field(
        None,
        ge=32,
        description="input size (longer side) of the detector's first look, for a model "
        "exported with a dynamic input (default: the model's own)",
    )
    second_look: int | None = Field(
        None,
        ge=0,
        description="input size at which photos of small dice are read again (0: never; "
        "default half as large again as the model's size)",
    )
    second_look_below: float = Field(
        24.0,
        ge=0.0,
        description="a photo gets a second look when its median die is smaller (input pixels)",
    )
    second_look_conf: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="boxes down to this confidence (or the reader's conf, if lower) count when "
        "judging whether a photo's dice are small",
    )
    fit_count: bool = Field(
        True,
        description="with the dice count given, keep the likeliest dice found or add faint ones "
        "to reach it (DICECAM_FIT_COUNT)",
    )
    fit_conf: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        description="faint boxes down to this confidence may be added to reach the dice count",
    )
    fit_min_verify: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="the die check's probability a faint box needs to be added to reach the count",
    )
    sure_faint: bool = Field(
        True,
        description="without a dice count, add faint boxes that the die check and the face "
        "classifier are both sure of, marked faint (DICECAM_SURE_FAINT; see vision.faint)",
    )
    sure_faint_conf: float = Field(
        0.05, ge=0.0, le=1.0, description="the faintest box asked about (vision.faint)"
    )
    sure_faint_check: float = Field(
        0.6, ge=0.0, le=1.0, description="the die check's probability a faint box needs"
    )
    sure_faint_face: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="the face classifier's probability of its value a faint box needs",
    )
    unsure_below: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="a die whose face the classifier gives less than this probability is marked "
        "unsure, the value to check (0: never)",
    )
    mirror: bool = Field(
        True,
        description="a photo with a doubtful die is read again mirrored, and a box the mirror "
        "image does not confirm loses up to half its confidence (DICECAM_MIRROR)",
    )
    threads: int = Field(2, ge=1, description="inference threads per model")
    backend: str = Field(
        "auto",
        description="detector runtime: openvino, onnxruntime or auto (OpenVINO when installed)",
    )

    max_image_pixels: int = Field(
        120_000_000, ge=1, description="refuse images whose header declares more pixels"
    )
    max_decoded_pixels: int = Field(
        40_000_000,
        ge=1,
        description="refuse images that would decode (after JPEG draft) to more pixels",
    )

    @field_validator("faces_model", "cocked_model", "verify_model", mode="before")
    @classmethod
    def _model_file(cls, value: Any, info: Any) -> Any:
        what = {"faces_model": "face classifier", "cocked_model": "cocked-die model"}
        return (
            value
            if value is None
            else check_model_file(value, what.get(info.field_name, "die check"))
        )

    @field_validator("imgsz")
    @classmethod
    def _on_the_stride(cls, value: int | None) -> int | None:
        return value if value is None else check_imgsz(value)

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        from vision.backends import resolve_backend

        resolve_backend(value)  # ValueError naming the backends, or that OpenVINO is missing
        return value


def get_vision_settings() -> VisionSettings:
    return VisionSettings()
