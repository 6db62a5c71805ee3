"""The reading of one photo: every die found, and what the table logic says about the roll."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Box", "Die", "Reading"]

Box = tuple[float, float, float, float]
"""x1, y1, x2, y2 in pixels of the input image (after EXIF orientation)."""


@dataclass(slots=True)
class Die:
    """One die as read from a photo.

    ``value`` is the top face (1 to 6). ``on_table`` is False when the die lies outside the
    playing surface (floor, beyond the edge, in the air); ``cocked`` is True when it leans and has
    no clear top face (its ``value`` is then the best guess).
    """

    value: int
    box: Box
    confidence: float
    on_table: bool = True
    cocked: bool = False
    faint: bool = False
    """Found only faintly (under the reader's confidence) and taken as a die to reach the dice
    count the caller gave (:mod:`vision.count`): the one to check."""
    face_confidence: float | None = None
    """The face classifier's probability of ``value`` (None when the detector reads values)."""
    unsure: bool = False
    """The face classifier is unsure of ``value`` (``face_confidence`` under the reader's
    ``unsure_below``): the value to check."""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["box"] = [round(float(v), 1) for v in self.box]
        d["confidence"] = round(float(self.confidence), 4)
        if self.face_confidence is not None:
            d["face_confidence"] = round(float(self.face_confidence), 4)
        return d


@dataclass(slots=True)
class Reading:
    """Everything read from one photo.

    Example:
        >>> r = Reading(width=640, height=480, dice=[Die(5, (10, 10, 40, 40), 0.98)])
        >>> r.values
        [5]
    """

    width: int
    height: int
    dice: list[Die] = field(default_factory=list)
    image: str | None = None
    outline: list[tuple[float, float]] | None = None
    """Playing-surface polygon in pixels, or None when no edge is visible (surface fills frame)."""
    expected_dice: int | None = None
    """How many dice the caller says were rolled, when known."""
    latency_ms: float | None = None
    missing_is_bust: bool = True
    """Morning Roll: fewer dice found than rolled is a bust; False = "ask the player" (``missing``
    is still reported, ``bust`` then counts only dice off the table)."""
    added: int = 0
    """Faint boxes taken as dice to reach ``expected_dice`` (see :mod:`vision.count`)."""
    dropped: int = 0
    """Boxes found beyond ``expected_dice`` and left out, the least likely dice first."""
    outline_source: str | None = None
    """Where ``outline`` came from: ``"calibration"`` (a fixed camera's stored boundary),
    ``"learned"`` (the outline model), None (no table step)."""
    outline_note: str | None = None
    """Why a stored calibration was not used for this photo (drawn on a photo of another shape)."""

    @property
    def values(self) -> list[int]:
        """Top values of the dice on the table that are not cocked, left to right."""
        dice = sorted(self.dice, key=lambda d: d.box[0])
        return [d.value for d in dice if d.on_table and not d.cocked]

    @property
    def off_table(self) -> int:
        return sum(1 for d in self.dice if not d.on_table)

    @property
    def cocked(self) -> int:
        return sum(1 for d in self.dice if d.cocked and d.on_table)

    @property
    def unsure(self) -> int:
        """Dice on the table, not cocked, whose value the face classifier is unsure of."""
        return sum(1 for d in self.dice if d.unsure and d.on_table and not d.cocked)

    @property
    def needs_check(self) -> bool:
        """True when the reading itself points at something to check before it is used: a die
        unsure, faint, cocked or off the table, or dice missing. A reading that is wrong while
        this is False is a silent error.

        Boxes left out of the count (``dropped``) do not count: they are mostly doubles and
        clutter, and on the real eval set they would send 12 more photos read right to be
        checked to catch one more wrong."""
        flagged = any(d.unsure or d.faint or d.cocked or not d.on_table for d in self.dice)
        return flagged or self.missing > 0

    @property
    def missing(self) -> int:
        if self.expected_dice is None:
            return 0
        return max(0, self.expected_dice - len(self.dice))

    @property
    def bust(self) -> bool:
        """True when a die left the table, or (by default) when dice are missing."""
        return self.off_table > 0 or (self.missing_is_bust and self.missing > 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "width": self.width,
            "height": self.height,
            "dice": [d.to_dict() for d in self.dice],
            "values": self.values,
            "off_table": self.off_table,
            "cocked": self.cocked,
            "unsure": self.unsure,
            "needs_check": self.needs_check,
            "expected_dice": self.expected_dice,
            "missing": self.missing,
            "added": self.added,
            "dropped": self.dropped,
            "bust": self.bust,
            "outline": [[round(x, 1), round(y, 1)] for x, y in self.outline]
            if self.outline
            else None,
            "outline_source": self.outline_source,
            "outline_note": self.outline_note,
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 2),
        }
