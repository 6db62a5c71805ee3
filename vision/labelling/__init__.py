"""Batch labelling: read a folder of photos, write YOLO / COCO / Label Studio, read them back.

Example (``dicecam label``, then ``dicecam labels import``):
    >>> import tempfile
    >>> from pathlib import Path
    >>> from vision import DiceReader
    >>> from vision.labelling import label_folder, read_labels, write_training_folder
    >>> out = Path(tempfile.mkdtemp())
    >>> run = label_folder("datasets/samples", DiceReader(), out, "labelstudio", show_progress=False)
    >>> len(run.photos), run.outputs["labels"].name  # tasks.json: import it into Label Studio
    (8, 'tasks.json')
    >>> photos = read_labels(out / "tasks.json", image_root="datasets/samples")  # its export
    >>> photos[0].name, [d.value for d in photos[0].dice]
    ('roll-s21-009.jpg', [3, 4, 1, 1, 1])
    >>> write_training_folder(photos, out / "train-set").name
    'data.yaml'
    >>> import shutil; shutil.rmtree(out)
"""

from .batch import (
    FORMATS,
    LabelFormat,
    LabelRun,
    PhotoReader,
    Unreadable,
    detect_format,
    label_folder,
    label_photos,
    read_labels,
    write_label_run,
    write_labels,
    write_training_folder,
)
from .coco import coco_dict, read_coco, write_coco
from .labelstudio import LOCAL_FILES_PREFIX, labelstudio_config, read_labelstudio, write_labelstudio
from .model import (
    IMAGE_EXTENSIONS,
    ImageMode,
    LabelFormatError,
    LabelledPhoto,
    find_photos,
    image_size,
    label_confidence,
)
from .progress import progress
from .review import ReviewRow, review_rows, write_review
from .yolo import read_yolo, write_yolo

__all__ = [
    "FORMATS",
    "IMAGE_EXTENSIONS",
    "LOCAL_FILES_PREFIX",
    "ImageMode",
    "LabelFormat",
    "LabelFormatError",
    "LabelRun",
    "LabelledPhoto",
    "PhotoReader",
    "ReviewRow",
    "Unreadable",
    "coco_dict",
    "detect_format",
    "find_photos",
    "image_size",
    "label_confidence",
    "label_folder",
    "label_photos",
    "labelstudio_config",
    "progress",
    "read_coco",
    "read_labels",
    "read_labelstudio",
    "read_yolo",
    "review_rows",
    "write_coco",
    "write_label_run",
    "write_labels",
    "write_labelstudio",
    "write_review",
    "write_training_folder",
    "write_yolo",
]
