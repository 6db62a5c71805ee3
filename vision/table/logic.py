"""Which dice lie on the playing surface, and the reader's table stage.

A die is on the table when its resting point (:func:`~vision.table.geometry.resting_point`) lies
inside the surface polygon, or no further outside it than ``tolerance`` of the die's size (a die
on the rim or a slightly too tight outline is not a bust): :data:`TOLERANCE` for a drawn
boundary (a calibration, a true outline), the wider :data:`LEARNED_TOLERANCE` for the outline
model's, whose grid cell is about one die wide. No outline (None) means the surface
fills the frame: every die is on it. An empty outline means no surface is in view.

Example:
    >>> from vision.types import Die, Reading
    >>> r = Reading(100, 100, [Die(3, (10, 10, 20, 20), 0.9), Die(4, (80, 80, 90, 90), 0.9)])
    >>> apply_table(r, [(0, 0), (50, 0), (50, 50), (0, 50)]).off_table
    1
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.model_files import kept_model
from vision.table.calibration import Calibration, TableSettings
from vision.table.dice import CONTEXT, DEFAULT_OFFTABLE_MODEL, OffTableModel
from vision.table.edges import EDGE_MIN_CONTRAST, edge_contrast
from vision.table.geometry import Outline, edge_distance, resting_point, signed_distance
from vision.table.surface import DEFAULT_SURFACE_MODEL, SurfaceModel, SurfaceModelError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from vision.count import DieCheck
    from vision.types import Die, Reading

__all__ = [
    "LEARNED_TOLERANCE",
    "OFF_MIN_DIE_CHECK",
    "TOLERANCE",
    "TableStage",
    "apply_table",
    "die_on_table",
    "learned_offtable",
    "learned_outline",
]

TOLERANCE = 0.25
"""How far outside a drawn outline (in die sizes) a die's resting point may lie and count as on."""

LEARNED_TOLERANCE = 0.75
"""The same for the learned outline (``DICECAM_SURFACE_TOLERANCE`` overrides it). Its 32x32 grid
puts edges a cell (20 px of a 640 px photo, a die's width) off. Chosen on the outline model's
validation rolls (synth-s11 val and the reader recipe's val, true dice boxes): resting off-table
dice found / clean rolls busted 41/177, 3/326 at 0.25; 40/177, 1/326 at 0.5; 40/177, 0/326 at
0.75; 39/177, 0/326 at 1.0 (the surface model card has the test figures)."""

OFF_MIN_DIE_CHECK = 0.7
"""A box called off the surface is dropped, not a bust, when the die check gives it a probability
of being a die under this (``DICECAM_OFFTABLE_MIN_DIE_CHECK``; 0 turns it off). Off the table
lie props, clutter and the floor's pattern, which the detector sometimes takes for dice. Chosen
on the outline's validation rolls (synth-s11 val and the recipe's val, the reader's boxes):
off-table dice found / clean rolls busted 35/177, 4/326 without; 32, 3 at 0.5; 32, 2 at 0.7; 29,
1 at 0.9 (the surface model card has the test figures)."""


def die_on_table(
    box: tuple[float, float, float, float], outline: Outline | None, tolerance: float = TOLERANCE
) -> bool:
    """True when the die in ``box`` rests on the surface ``outline`` (pixels)."""
    if outline is None:
        return True
    if len(outline) < 3:
        return False
    size = min(box[2] - box[0], box[3] - box[1])
    return signed_distance(outline, resting_point(box)) >= -tolerance * max(size, 1.0)


def apply_table(
    reading: Reading,
    outline: Outline | None,
    *,
    tolerance: float = TOLERANCE,
    source: str | None = None,
) -> Reading:
    """Set ``on_table`` of every die, ``reading.outline`` and ``reading.outline_source`` (where
    the outline came from: ``"calibration"``, ``"learned"``) in place; returns ``reading``."""
    reading.outline = None if outline is None else [(float(x), float(y)) for x, y in outline]
    reading.outline_source = source
    for die in reading.dice:
        die.on_table = die_on_table(die.box, outline, tolerance)
    return reading


class TableStage:
    """The reader's table step: the calibrated boundary if there is one, else the learned outline.

    Args:
        model: a :class:`SurfaceModel`, or a path to its ONNX file (None: no learned outline).
        calibration: a fixed camera's boundary (None: none).
        tolerance: see :func:`die_on_table`, for a calibration.
        learned_tolerance: the same for the learned outline (default
            ``DICECAM_SURFACE_TOLERANCE``, else :data:`LEARNED_TOLERANCE`).
        dice_model: an :class:`OffTableModel` that looks at each die's surroundings: a die it
            calls off the surface is off even inside the learned outline, unless it rests
            deeper inside than its crop reaches (half the crop, 2 die sizes), where the crop
            shows the model no edge. Not used with a calibration, which is the user's own
            boundary.
        min_confidence: a box off the surface whose detector confidence is under this is
            dropped from the reading rather than called off the table (0: none dropped).
        die_check: the reader's die check (:class:`vision.verify.VerifyModel`; anything with
            ``probability(rgb, boxes)``): a box off the surface that it gives a probability of
            being a die under ``min_die_check`` is dropped rather than called off the table.
        min_die_check: default ``DICECAM_OFFTABLE_MIN_DIE_CHECK``, else
            :data:`OFF_MIN_DIE_CHECK` (0: none dropped).
        edge_contrast: a die the learned outline puts off the surface stays on when the photo
            shows no edge between it and the surface nearby, in colour (L*a*b* distance, lightness
            counted half, under this) or texture (:mod:`vision.table.edges`). Default
            ``DICECAM_SURFACE_EDGE_CONTRAST``, else :data:`EDGE_MIN_CONTRAST` (0: not asked).

    Example:
        >>> stage = TableStage(calibration=Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)]))
        >>> stage.outline(None, 640, 480)
        [(0.0, 0.0), (320.0, 0.0), (320.0, 480.0), (0.0, 480.0)]
    """

    def __init__(
        self,
        model: SurfaceModel | str | Path | None = None,
        calibration: Calibration | None = None,
        *,
        tolerance: float = TOLERANCE,
        learned_tolerance: float | None = None,
        dice_model: OffTableModel | None = None,
        min_confidence: float = 0.0,
        die_check: DieCheck | None = None,
        min_die_check: float | None = None,
        edge_contrast: float | None = None,
    ) -> None:
        self.model = SurfaceModel(model) if isinstance(model, (str, Path)) else model
        self.calibration = calibration
        self.tolerance = float(tolerance)
        unset = None in (learned_tolerance, min_die_check, edge_contrast)
        settings = TableSettings() if unset else None
        if learned_tolerance is None:
            learned_tolerance = settings.surface_tolerance
        self.learned_tolerance = float(
            LEARNED_TOLERANCE if learned_tolerance is None else learned_tolerance
        )
        if self.tolerance < 0 or self.learned_tolerance < 0:
            raise ValueError(
                f"expected tolerances of 0 or more, got {self.tolerance} and "
                f"{self.learned_tolerance}"
            )
        self.dice_model = dice_model
        if not 0.0 <= min_confidence <= 1.0:
            raise ValueError(f"expected 0 <= min_confidence <= 1, got {min_confidence}")
        self.min_confidence = float(min_confidence)
        self.die_check = die_check
        if min_die_check is None:
            min_die_check = settings.offtable_min_die_check
        if min_die_check is None:
            min_die_check = OFF_MIN_DIE_CHECK
        if not 0.0 <= min_die_check <= 1.0:
            raise ValueError(f"expected 0 <= min_die_check <= 1, got {min_die_check}")
        self.min_die_check = float(min_die_check)
        if edge_contrast is None:
            edge_contrast = settings.surface_edge_contrast
        self.edge_contrast = float(EDGE_MIN_CONTRAST if edge_contrast is None else edge_contrast)
        if self.edge_contrast < 0:
            raise ValueError(f"expected edge_contrast of 0 or more, got {self.edge_contrast}")

    def replace(self, **changes: Any) -> TableStage:
        """A copy with ``changes`` (any argument of the constructor) and every other setting as
        this stage has it, checked as the constructor checks them.

        Example:
            >>> learned = TableStage(learned_tolerance=0.5, min_confidence=0.3)
            >>> fixed = learned.replace(calibration=Calibration([(0, 0), (1, 0), (0, 1)]))
            >>> fixed.calibration is not None, fixed.learned_tolerance, fixed.min_confidence
            (True, 0.5, 0.3)
        """
        names = list(inspect.signature(TableStage).parameters)  # each kept under its own name
        kept = {name: getattr(self, name) for name in names}
        return TableStage(**{**kept, **changes})

    @classmethod
    def default(cls, *, threads: int = 1, die_check: DieCheck | None = None) -> TableStage | None:
        """From the settings: the stored calibration, else the shipped (or
        ``DICECAM_SURFACE_MODEL``) outline model with the off-table die model (or
        ``DICECAM_OFFTABLE_MODEL``) when it exists, each run with ``threads`` threads; None
        when neither a calibration nor an outline model exists, or ``DICECAM_TABLE=0``.

        Raises:
            CalibrationError: a calibration file exists but is broken (fix or delete it).
        """
        s = TableSettings()
        if not s.table:
            return None
        calibration = Calibration.load()
        model = learned_outline(threads=threads)  # with a calibration: for photos it misfits
        if calibration is None and model is None:
            return None
        dice_model = None if model is None else learned_offtable(threads=threads)
        return cls(
            model,
            calibration,
            dice_model=dice_model,
            min_confidence=s.offtable_min_conf,
            die_check=die_check,
        )

    def outline(
        self,
        rgb: NDArray[np.uint8] | None,
        width: int,
        height: int,
        boxes: Sequence[Sequence[float]] = (),
    ) -> Outline | None:
        """The surface polygon in pixels of a ``width`` x ``height`` photo (``rgb`` may be that
        photo decoded smaller); ``boxes``, the dice found in those pixels, for a model that
        reads them."""
        if self._drawn(width, height):
            return self.calibration.outline(width, height)
        if self.model is None or rgb is None:
            return None
        return self.model.outline(rgb, (width, height), boxes=boxes)

    def _drawn(self, width: int, height: int) -> bool:
        """Whether the calibrated boundary applies to a ``width`` x ``height`` photo."""
        return self.calibration is not None and self.calibration.fits(width, height)

    def misfit(self, width: int, height: int) -> str:
        """What a reading of a ``width`` x ``height`` photo says when the calibration, drawn on a
        photo of another shape, is not used for it."""
        instead = "the learned outline" if self.model is not None else "no outline"
        return self.calibration.misfit(width, height, instead)  # type: ignore[union-attr]

    def apply(self, reading: Reading, rgb: NDArray[np.uint8] | None) -> Reading:
        """Fill ``reading.outline`` and each die's ``on_table`` (in place), and drop the boxes
        off the surface that are faint (``min_confidence``) or that the die check doubts
        (``min_die_check``)."""
        boxes = [d.box for d in reading.dice]
        outline = self.outline(rgb, reading.width, reading.height, boxes)
        drawn = self._drawn(reading.width, reading.height)
        learned = None if self.model is None or rgb is None else "learned"
        tolerance = self.tolerance if drawn else self.learned_tolerance
        apply_table(
            reading, outline, tolerance=tolerance, source="calibration" if drawn else learned
        )
        if self.calibration is not None and not drawn:
            reading.outline_note = self.misfit(reading.width, reading.height)
        if not drawn and self.edge_contrast > 0 and rgb is not None and outline:
            self._keep_without_edge(reading, rgb, outline)
        if self.dice_model is not None and not drawn and rgb is not None and reading.dice:
            reach = getattr(self.dice_model, "context", CONTEXT) / 2  # die to its crop's edge
            # a die deeper inside the outline than its crop reaches is not asked: no edge in view
            near = [d for d in reading.dice if _depth(d, outline, reading) < reach]
            if near:
                p_offs = self.dice_model.probability(rgb, _in_pixels_of(rgb, reading, near))
                for die, p_off in zip(near, p_offs, strict=True):
                    if p_off >= self.dice_model.threshold:
                        die.on_table = False
        off = [d for d in reading.dice if not d.on_table]
        if self.die_check is not None and self.min_die_check > 0 and rgb is not None and off:
            p_dice = self.die_check.probability(rgb, _in_pixels_of(rgb, reading, off))
            doubted = {id(d) for d, p in zip(off, p_dice, strict=True) if p < self.min_die_check}
            reading.dice = [d for d in reading.dice if id(d) not in doubted]
        if self.min_confidence > 0:
            reading.dice = [
                d for d in reading.dice if d.on_table or d.confidence >= self.min_confidence
            ]
        return reading

    def _keep_without_edge(
        self, reading: Reading, rgb: NDArray[np.uint8], outline: Outline
    ) -> None:
        """Put back on the surface the dice the learned outline calls off where the photo
        shows no edge between them and the surface nearby."""
        off = [d for d in reading.dice if not d.on_table]
        if not off:
            return
        for die, contrast in zip(off, edge_contrast(rgb, reading, off, outline), strict=True):
            if contrast is not None and not contrast.shows(self.edge_contrast):
                die.on_table = True

    def __repr__(self) -> str:
        source = "calibration" if self.calibration is not None else repr(self.model)
        dice = "" if self.dice_model is None else f", dice_model={self.dice_model!r}"
        faint = f", min_confidence={self.min_confidence}" if self.min_confidence else ""
        doubt = ""
        if self.die_check is not None and self.min_die_check:
            doubt = f", min_die_check={self.min_die_check}"
        tolerance = self.tolerance if self.calibration is not None else self.learned_tolerance
        edge = ""
        if self.calibration is None and self.edge_contrast:
            edge = f", edge_contrast={self.edge_contrast}"
        return f"TableStage({source}, tolerance={tolerance}{edge}{dice}{faint}{doubt})"


def learned_outline(*, threads: int = 1) -> SurfaceModel | None:
    """The outline model of the settings (``DICECAM_SURFACE_MODEL``, else the shipped one) with
    its certainty gate (``DICECAM_SURFACE_MIN_CERTAINTY``, else the model's own), or None when
    the setting is ``none`` or, with none set, the shipped file is absent (a trimmed install).
    Loaded once per file, threads and gate (:func:`vision.model_files.kept_model`).

    Raises:
        SurfaceModelError: the file is not an outline model dicecam can read (one the setting
            names: said so).
    """
    s = TableSettings()
    if s.surface_model == "none" or (
        s.surface_model is None and not DEFAULT_SURFACE_MODEL.is_file()
    ):
        return None
    path, certainty = s.surface_model or DEFAULT_SURFACE_MODEL, s.surface_min_certainty
    try:
        return kept_model(
            path,
            ("outline", threads, certainty),
            lambda: SurfaceModel(path, min_certainty=certainty, threads=threads),
        )
    except SurfaceModelError as exc:
        if s.surface_model is None:
            raise
        raise SurfaceModelError(f"{exc} (named by DICECAM_SURFACE_MODEL)") from None


def learned_offtable(*, threads: int = 1) -> OffTableModel | None:
    """The off-table die model of the settings (``DICECAM_OFFTABLE_MODEL``, else the shipped
    one) with its threshold (``DICECAM_OFFTABLE_THRESHOLD``), or None when the setting is
    ``none`` or, with none set, the shipped file is absent (a trimmed install). Loaded once per
    file, threads and threshold (:func:`vision.model_files.kept_model`).

    Raises:
        ValueError: the file is not an off-table die model dicecam can read (one the setting
            names: said so).
    """
    s = TableSettings()
    if s.offtable_model == "none":
        return None
    if s.offtable_model is None and not DEFAULT_OFFTABLE_MODEL.is_file():
        return None
    path, threshold = s.offtable_model or DEFAULT_OFFTABLE_MODEL, s.offtable_threshold
    try:
        return kept_model(
            path,
            ("offtable", threads, threshold),
            lambda: OffTableModel(path, threshold=threshold, threads=threads),
        )
    except (OSError, ValueError) as exc:  # gone since the settings were read, or not one
        if s.offtable_model is None:
            raise
        raise ValueError(f"{exc} (named by DICECAM_OFFTABLE_MODEL)") from None


def _in_pixels_of(
    rgb: NDArray[np.uint8], reading: Reading, dice: Sequence[Die]
) -> list[tuple[float, float, float, float]]:
    """The boxes of ``dice`` (pixels of the reading's photo) in pixels of ``rgb``, which may be
    that photo decoded smaller."""
    sx, sy = rgb.shape[1] / reading.width, rgb.shape[0] / reading.height
    return [(d.box[0] * sx, d.box[1] * sy, d.box[2] * sx, d.box[3] * sy) for d in dice]


def _depth(die: Die, outline: Outline | None, reading: Reading) -> float:
    """How far inside ``outline`` from its nearest real edge (not the photo's frame) the die
    rests, in die sizes (negative outside; minus infinity without an outline to measure from)."""
    if not outline or len(outline) < 3:
        return float("-inf")
    size = max(min(die.box[2] - die.box[0], die.box[3] - die.box[1]), 1.0)
    point = resting_point(die.box)
    inside = signed_distance(outline, point)
    if inside < 0:
        return inside / size
    return edge_distance(outline, point, reading.width, reading.height) / size
