"""Images in, dice readings out.

Example:
    >>> from vision import DiceReader
    >>> reader = DiceReader()  # models/dicecam-reader.onnx, or DICECAM_MODEL
    >>> reader.read("datasets/samples/roll-s21-016.jpg").values  # left to right
    [6, 2, 6]

Importing this package is light: OpenVINO and onnxruntime load when the first :class:`DiceReader`
is made.
"""

from vision.annotate import annotate, save_annotated
from vision.config import VisionSettings
from vision.evaluate import DatasetError, evaluate_dataset
from vision.io import ImageError, ImageSource, LoadedImage, load_image
from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    LabelRun,
    label_folder,
    label_photos,
    read_labels,
    write_labels,
    write_training_folder,
)
from vision.matching import TruthDie, match_dice
from vision.metrics import EvalResult
from vision.reader import DiceReader, ModelError
from vision.table import (
    Calibration,
    CalibrationError,
    SurfaceModel,
    TableStage,
    apply_table,
    evaluate_table,
)
from vision.types import Box, Die, Reading
from vision.video import (
    SettledRoll,
    VideoError,
    VideoFrame,
    VideoInfo,
    same_roll,
    settled_rolls,
    video_frames,
)

__all__ = [
    "Box",
    "Calibration",
    "CalibrationError",
    "DatasetError",
    "DiceReader",
    "Die",
    "EvalResult",
    "ImageError",
    "ImageSource",
    "LabelFormatError",
    "LabelRun",
    "LabelledPhoto",
    "LoadedImage",
    "ModelError",
    "Reading",
    "SettledRoll",
    "SurfaceModel",
    "TableStage",
    "TruthDie",
    "VideoError",
    "VideoFrame",
    "VideoInfo",
    "VisionSettings",
    "annotate",
    "apply_table",
    "evaluate_dataset",
    "evaluate_table",
    "label_folder",
    "label_photos",
    "load_image",
    "match_dice",
    "read_labels",
    "same_roll",
    "save_annotated",
    "settled_rolls",
    "video_frames",
    "write_labels",
    "write_training_folder",
]
