"""Images in, dice readings out.

Example:
    >>> from vision import DiceReader
    >>> reader = DiceReader()  # doctest: +SKIP
    >>> reader.read("roll.jpg").values  # doctest: +SKIP
    [2, 3, 3, 5, 6]

Importing this package is light: onnxruntime loads when the first :class:`DiceReader` is made.
"""

from vision.annotate import annotate, save_annotated
from vision.config import VisionSettings
from vision.evaluate import DatasetError, evaluate_dataset
from vision.io import ImageError, ImageSource, LoadedImage, load_image
from vision.metrics import EvalResult, TruthDie, match_dice
from vision.reader import DiceReader, ModelError
from vision.types import Box, Die, Reading

__all__ = [
    "Box",
    "DatasetError",
    "DiceReader",
    "Die",
    "EvalResult",
    "ImageError",
    "ImageSource",
    "LoadedImage",
    "ModelError",
    "Reading",
    "TruthDie",
    "VisionSettings",
    "annotate",
    "evaluate_dataset",
    "load_image",
    "match_dice",
    "save_annotated",
]
