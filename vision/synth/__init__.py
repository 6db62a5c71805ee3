"""Synthetic tabletop rolls with exact labels: the detector's bulk training data.

pybullet decides where thrown dice land (on a table or in a tray, off the edge, in the air,
leaning); an OpenCV 2.5D renderer draws the photo. Labels come from the simulation.

Example:
    >>> from vision.synth import make_sample
    >>> s = make_sample(seed=0, index=0, width=320, height=240)
    >>> all(0 <= d["class"] <= 6 for d in s.dice)
    True
"""

from .dataset import CLASS_NAMES, DatasetSummary, sample_name, sample_split, write_dataset
from .preview import contact_sheet, draw_labels, preview_sheet
from .sample import COCKED_CLASS, COCKED_TILT_DEG, MIN_VISIBLE, Sample, make_sample, render_scene
from .scene import sample_scene

__all__ = [
    "CLASS_NAMES",
    "COCKED_CLASS",
    "COCKED_TILT_DEG",
    "MIN_VISIBLE",
    "DatasetSummary",
    "Sample",
    "contact_sheet",
    "draw_labels",
    "make_sample",
    "preview_sheet",
    "render_scene",
    "sample_name",
    "sample_scene",
    "sample_split",
    "write_dataset",
]
