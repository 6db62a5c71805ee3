"""A fixed camera's playing-surface boundary, set once by the user (``dicecam calibrate``).

Stored as JSON with normalised coordinates (0..1 of the photo's width and height), so it holds
for any resolution of the same camera view. Location: ``DICECAM_CALIBRATION``, else
``<DICECAM_DATA_DIR or ~/.dicecam>/calibration.json`` (the service's ``Settings().data_dir``).

Example:
    >>> cal = Calibration.from_pixels([(0, 0), (320, 0), (320, 240)], 640, 480)
    >>> cal.points
    [(0.0, 0.0), (0.5, 0.0), (0.5, 0.5)]
    >>> cal.outline(1280, 960)
    [(0.0, 0.0), (640.0, 0.0), (640.0, 480.0)]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from vision.atomic import atomic_write
from vision.table.geometry import Outline

__all__ = ["Calibration", "CalibrationError", "TableSettings", "calibration_path"]

FORMAT = 1


class TableSettings(BaseSettings):
    """Where the calibration lives and whether the table logic runs (``DICECAM_*``)."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    data_dir: Path = Path.home() / ".dicecam"
    calibration: Path | None = None
    """The calibration file (default ``data_dir / "calibration.json"``)."""
    surface_model: Path | None = None
    """The outline model (default ``<repo>/models/dicecam-surface.onnx``)."""
    surface_min_certainty: float | None = Field(None, ge=0.0, lt=1.0)
    """Grid certainty under which the outline model gives no outline (default: the model's
    own ``min_certainty`` metadata)."""
    surface_tolerance: float | None = Field(None, ge=0.0)
    """How far outside the learned outline, in die sizes, a die may rest and count as on the
    table (default :data:`vision.table.logic.LEARNED_TOLERANCE`)."""
    surface_edge_contrast: float | None = Field(None, ge=0.0)
    """L*a*b* colour distance (lightness counted half) under which, with no texture difference
    either, the photo shows no edge where the learned outline puts a die off the surface, and
    the die stays on (default :data:`vision.table.edges.EDGE_MIN_CONTRAST`; 0: not asked)."""
    offtable_model: Path | None = None
    """The off-table die model (default ``<repo>/models/dicecam-offtable.onnx``; an empty
    ``DICECAM_OFFTABLE_MODEL=`` path that does not exist turns it off)."""
    offtable_threshold: float = Field(0.8, gt=0.0, lt=1.0)
    """P(off) from which the off-table die model calls a die off the surface."""
    offtable_min_conf: float = Field(0.0, ge=0.0, le=1.0)
    """Detector confidence under which a box off the surface is dropped, not called off: past
    the table's edge faint boxes are mostly clutter, and one false off-table die busts a roll."""
    offtable_min_die_check: float | None = Field(None, ge=0.0, le=1.0)
    """The die check's probability under which a box off the surface is dropped, not called off
    (:data:`vision.table.logic.OFF_MIN_DIE_CHECK`; 0: none dropped)."""
    table: bool = True
    """Run the table logic in the reader (``DICECAM_TABLE=0`` turns it off)."""


class CalibrationError(ValueError):
    """A calibration file or polygon that is not usable (names what was expected)."""


def calibration_path() -> Path:
    """``DICECAM_CALIBRATION``, else ``<data_dir>/calibration.json``."""
    s = TableSettings()
    return Path(s.calibration) if s.calibration else Path(s.data_dir) / "calibration.json"


def _check(points: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    pts = []
    for p in points:
        if len(p) != 2:
            raise CalibrationError(f"expected points as (x, y) pairs, got {list(p)!r}")
        x, y = float(p[0]), float(p[1])
        if not (-0.5 <= x <= 1.5 and -0.5 <= y <= 1.5):
            raise CalibrationError(f"expected normalised coordinates near 0..1, got ({x}, {y})")
        pts.append((x, y))
    if len(pts) < 3:
        raise CalibrationError(f"expected at least 3 boundary points, got {len(pts)}")
    area = 0.5 * abs(
        sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))
    )
    if area < 1e-3:
        raise CalibrationError(
            f"expected a boundary enclosing some of the photo, got an area of {area:.2g} of it"
        )
    return pts


@dataclass(slots=True)
class Calibration:
    """The boundary polygon of the playing surface, normalised to the photo's size."""

    points: list[tuple[float, float]]
    image: str | None = None
    """The photo it was made from (for the record)."""
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    aspect: float | None = None
    """Width over height of the photo it was drawn on: a frame of another shape (16:9 against
    4:3, portrait against landscape) would stretch it (:meth:`fits`). None: any photo."""

    def __post_init__(self) -> None:
        self.points = _check(self.points)

    @classmethod
    def from_pixels(
        cls, points: Sequence[Sequence[float]], width: int, height: int, image: str | None = None
    ) -> Calibration:
        """A calibration from a polygon in pixels of a ``width`` x ``height`` photo."""
        if width <= 0 or height <= 0:
            raise CalibrationError(f"expected a positive photo size, got {width}x{height}")
        for x, y in points:  # the slack _check allows, said in pixels
            if not (-width / 2 <= x <= 1.5 * width and -height / 2 <= y <= 1.5 * height):
                raise CalibrationError(
                    f"expected boundary points in the photo's pixels (it is {width}x{height}), "
                    f"got {x:g},{y:g}, more than half the photo beyond its edge"
                )
        return cls(
            [(float(x) / width, float(y) / height) for x, y in points],
            image=image,
            aspect=width / height,
        )

    def fits(self, width: int, height: int) -> bool:
        """Whether a ``width`` x ``height`` photo has the shape this boundary was drawn on
        (within 3%); one that does not is read with the learned outline instead.

        Example:
            >>> cal = Calibration.from_pixels([(0, 0), (640, 0), (320, 480)], 640, 480)
            >>> cal.fits(1280, 960), cal.fits(1280, 720), cal.fits(480, 640)
            (True, False, False)
        """
        if self.aspect is None or width <= 0 or height <= 0:
            return True
        return abs(width / height / self.aspect - 1) <= 0.03

    def outline(self, width: int, height: int) -> Outline:
        """The polygon in pixels of a ``width`` x ``height`` photo."""
        return [(round(x * width, 1), round(y * height, 1)) for x, y in self.points]

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "points": [[round(x, 5), round(y, 5)] for x, y in self.points],
            "image": self.image,
            "created": self.created,
            "aspect": None if self.aspect is None else round(self.aspect, 5),
        }

    @classmethod
    def load(cls, path: str | Path | None = None) -> Calibration | None:
        """The stored calibration, or None when there is none.

        Raises:
            CalibrationError: the file exists but is not a dicecam calibration.
        """
        path = Path(path) if path is not None else calibration_path()
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"cannot read calibration {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("points"), list):
            raise CalibrationError(
                f"{path}: expected a JSON object with a 'points' list, got "
                f"{type(data).__name__ if not isinstance(data, dict) else sorted(data)}"
            )
        image, aspect = data.get("image"), data.get("aspect")
        try:
            if aspect is not None and not (isinstance(aspect, int | float) and aspect > 0):
                raise CalibrationError(f"expected 'aspect' a positive number, got {aspect!r}")
            return cls(
                [tuple(p) for p in data["points"]],
                image=None if image is None else str(image),
                created=str(data.get("created", "")),
                aspect=None if aspect is None else float(aspect),
            )
        except (TypeError, ValueError) as exc:  # CalibrationError is a ValueError too
            raise CalibrationError(f"{path}: {exc}") from None

    def save(self, path: str | Path | None = None) -> Path:
        """Write atomically (a half-written file never replaces a good one); returns the path."""
        path = Path(path) if path is not None else calibration_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, json.dumps(self.to_dict(), indent=1))

    @staticmethod
    def clear(path: str | Path | None = None) -> bool:
        """Remove the stored calibration; True when there was one."""
        path = Path(path) if path is not None else calibration_path()
        if path.is_file():
            path.unlink()
            return True
        return False
