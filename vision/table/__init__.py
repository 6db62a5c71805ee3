"""The playing surface: its outline (learned or calibrated) and which dice lie on it.

- :class:`SurfaceModel`: the learned outline (``models/dicecam-surface.onnx``, onnxruntime);
  :func:`play_surface` picks the tray or the table from its layers.
- :class:`OffTableModel`: each die with its surroundings, off the surface or not
  (``models/dicecam-offtable.onnx``).
- :func:`edge_contrast`: whether the photo shows the edge the learned outline draws beside a
  die (a die past an edge the photo does not show stays on the surface).
- :func:`apply_table`: sets ``on_table`` of every die and the reading's ``outline``.
- :class:`Calibration`: a fixed camera's boundary polygon (``dicecam calibrate``).
- :class:`TableStage`: what :class:`vision.DiceReader` runs after detection.
- :func:`evaluate_table`: the logic alone on the true dice of a synthetic set.

Example:
    >>> from vision.table import apply_table
    >>> from vision.types import Die, Reading
    >>> r = Reading(640, 480, [Die(6, (600, 400, 640, 440), 0.9)])
    >>> apply_table(r, [(0, 0), (400, 0), (400, 480), (0, 480)]).bust
    True
"""

from vision.table.calibration import (
    MAX_POINTS,
    Calibration,
    CalibrationError,
    TableSettings,
    calibration_path,
    check_polygon,
)
from vision.table.dice import DEFAULT_OFFTABLE_MODEL, OffTableModel, context_crop
from vision.table.edges import EDGE_MIN_CONTRAST, EdgeContrast, edge_contrast
from vision.table.evaluate import TableReport, evaluate_table
from vision.table.geometry import Outline, mask_to_outline, outline_mask, resting_point
from vision.table.logic import (
    LEARNED_TOLERANCE,
    OFF_MIN_DIE_CHECK,
    TOLERANCE,
    TableStage,
    apply_table,
    die_on_table,
    learned_offtable,
    learned_outline,
)
from vision.table.surface import (
    DEFAULT_SURFACE_MODEL,
    LAYERS,
    SurfaceFinding,
    SurfaceModel,
    SurfaceModelError,
    play_surface,
    surface_certainty,
)

__all__ = [
    "DEFAULT_OFFTABLE_MODEL",
    "DEFAULT_SURFACE_MODEL",
    "EDGE_MIN_CONTRAST",
    "LAYERS",
    "LEARNED_TOLERANCE",
    "MAX_POINTS",
    "OFF_MIN_DIE_CHECK",
    "TOLERANCE",
    "Calibration",
    "EdgeContrast",
    "CalibrationError",
    "OffTableModel",
    "Outline",
    "SurfaceFinding",
    "SurfaceModel",
    "SurfaceModelError",
    "TableReport",
    "TableSettings",
    "TableStage",
    "apply_table",
    "calibration_path",
    "check_polygon",
    "context_crop",
    "die_on_table",
    "edge_contrast",
    "learned_offtable",
    "learned_outline",
    "evaluate_table",
    "mask_to_outline",
    "outline_mask",
    "play_surface",
    "resting_point",
    "surface_certainty",
]
