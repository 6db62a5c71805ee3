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
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from vision.atomic import atomic_write
from vision.config import check_model_file
from vision.table.geometry import Outline

__all__ = [
    "MAX_POINTS",
    "Calibration",
    "CalibrationError",
    "TableSettings",
    "calibration_path",
    "check_polygon",
]

FORMAT = 1
"""The calibration file's format; a file of a newer format is refused, not misread."""

MAX_POINTS = 64
"""The most corners a boundary may have (the learned outline's proposals have about 4-12)."""

MIN_AREA = 0.005
"""The least share of the photo a boundary must enclose."""


class TableSettings(BaseSettings):
    """Where the calibration lives and whether the table logic runs (``DICECAM_*``)."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    data_dir: Path = Path.home() / ".dicecam"
    calibration: Path | None = None
    """The calibration file (default ``data_dir / "calibration.json"``)."""
    surface_model: Path | Literal["none"] | None = None
    """The outline model (default ``<repo>/models/dicecam-surface.onnx``, when there; ``none``:
    no learned outline). A file named must be there: the learned outline is not left out
    silently for a mistyped path."""
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
    offtable_model: Path | Literal["none"] | None = None
    """The off-table die model (default ``<repo>/models/dicecam-offtable.onnx``, when there;
    ``none``: no off-table die model). A file named must be there."""
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

    @field_validator("surface_model", "offtable_model", mode="before")
    @classmethod
    def _model_file(cls, value: Any, info: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            return None if value is None else "none"
        what = "outline model" if info.field_name == "surface_model" else "off-table die model"
        return check_model_file(value, what, off=f", or none for no {what}")


class CalibrationError(ValueError):
    """A calibration file or polygon that is not usable (names what was expected)."""


def calibration_path() -> Path:
    """``DICECAM_CALIBRATION``, else ``<data_dir>/calibration.json``."""
    s = TableSettings()
    return Path(s.calibration) if s.calibration else Path(s.data_dir) / "calibration.json"


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _segments_cross(
    p1: tuple[float, float],
    p2: tuple[float, float],
    q1: tuple[float, float],
    q2: tuple[float, float],
) -> bool:
    """True when the segments p1-p2 and q1-q2 cross at a point inside both (proper crossing)."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def _point(k: int, p: object) -> tuple[float, float]:
    """Point ``k`` (from 1) as two finite numbers, or CalibrationError naming what came."""
    if isinstance(p, str | bytes) or not isinstance(p, Sequence) or len(p) != 2:
        raise CalibrationError(f"point {k}: expected [x, y], got {p!r}")
    try:
        x, y = float(p[0]), float(p[1])
    except (TypeError, ValueError):
        raise CalibrationError(f"point {k}: expected [x, y] numbers, got {list(p)!r}") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise CalibrationError(f"point {k}: expected finite numbers, got ({x}, {y})")
    return x, y


def check_polygon(
    points: Sequence[Sequence[float]],
    width: float = 1.0,
    height: float = 1.0,
    *,
    slack: float = 0.0,
) -> list[tuple[float, float]]:
    """A boundary polygon as ``(x, y)`` pairs in units of a ``width`` x ``height`` photo (pixels;
    1 x 1: normalised), or :class:`CalibrationError` saying what is wrong with it: fewer than 3
    or more than :data:`MAX_POINTS` points, a point that is not two finite numbers or lies
    outside the photo (by more than ``slack`` of its size), the same point twice, edges that
    cross (a bow-tie), a corner where it runs back along itself, or an area under
    :data:`MIN_AREA` of the photo. ``dicecam calibrate``, the service and :class:`Calibration`
    all check with it.

    Example:
        >>> check_polygon([[0, 0], [640, 0], [320, 480]], 640, 480)
        [(0.0, 0.0), (640.0, 0.0), (320.0, 480.0)]
    """
    if isinstance(points, str | bytes) or not isinstance(points, Sequence):
        raise CalibrationError(f"expected a list of [x, y] points, got {points!r:.60}")
    n = len(points)
    if n < 3:
        raise CalibrationError(f"expected at least 3 boundary points, got {n}")
    if n > MAX_POINTS:
        raise CalibrationError(f"expected at most {MAX_POINTS} boundary points, got {n}")
    pts = [_point(k, p) for k, p in enumerate(points, 1)]
    lo_x, hi_x, lo_y, hi_y = (
        -slack * width,
        (1 + slack) * width,
        -slack * height,
        (1 + slack) * height,
    )
    for k, (x, y) in enumerate(pts, 1):
        if not (lo_x <= x <= hi_x and lo_y <= y <= hi_y):
            if (width, height) == (1.0, 1.0):
                within = "0..1" if not slack else f"near 0..1 ({-slack:g}..{1 + slack:g})"
                raise CalibrationError(
                    f"point {k}: expected normalised coordinates {within}, got ({x:g}, {y:g})"
                )
            raise CalibrationError(
                f"point {k} ({x:g}, {y:g}) lies outside the {width:g}x{height:g} photo "
                f"(expected 0 <= x <= {width:g} and 0 <= y <= {height:g})"
            )
    same = 1e-4 * max(width, height)
    for i in range(n):
        for j in range(i + 1, n):
            if math.dist(pts[i], pts[j]) <= same:
                raise CalibrationError(
                    f"expected distinct boundary points, got the same point twice "
                    f"(points {i + 1} and {j + 1}: {pts[i][0]:g}, {pts[i][1]:g})"
                )
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # neighbouring edges share a corner
            if _segments_cross(pts[i], pts[(i + 1) % n], pts[j], pts[(j + 1) % n]):
                raise CalibrationError(
                    f"the boundary crosses itself (edges {i + 1}-{i + 2} and "
                    f"{j + 1}-{(j + 1) % n + 1}); expected the corners in order around the surface"
                )
    area = 0.5 * abs(
        sum(_cross((0.0, 0.0), a, b) for a, b in zip(pts, pts[1:] + pts[:1], strict=True))
    )
    share = area / (width * height)
    if share < MIN_AREA:
        raise CalibrationError(
            f"expected a boundary enclosing some of the photo (at least {MIN_AREA:.1%}), got "
            f"{math.floor(share * 1e4) / 100:.2f}% of it (points on a line, or too close "
            "together)"  # rounded down: just under the bar never reads as the bar itself
        )
    for k in range(n):  # a corner where the boundary runs back along the edge it came by
        a, b, c = pts[k - 1], pts[k], pts[(k + 1) % n]
        u, v = (b[0] - a[0], b[1] - a[1]), (c[0] - b[0], c[1] - b[1])
        dot = u[0] * v[0] + u[1] * v[1]
        if dot < 0 and abs(u[0] * v[1] - u[1] * v[0]) <= 1e-6 * -dot:
            raise CalibrationError(
                f"the boundary turns back along itself at point {k + 1} ({b[0]:g}, {b[1]:g}); "
                "expected the corners in order around the surface"
            )
    return pts


def _ratio(aspect: float) -> str:
    """A width-over-height ratio as a player names it: ``4:3``, ``3:4``, ``16:9``, else ``1.85:1``."""
    for w, h in ((4, 3), (16, 9), (3, 2), (1, 1), (5, 4), (21, 9)):
        for a, b in ((w, h), (h, w)):
            if abs(aspect / (a / b) - 1) <= 0.03:
                return f"{a}:{b}"
    return f"{aspect:.2f}:1"


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
        # as check_polygon, with the slack past the frame that files of older dicecams may hold
        self.points = check_polygon(self.points, slack=0.5)

    @classmethod
    def from_pixels(
        cls, points: Sequence[Sequence[float]], width: int, height: int, image: str | None = None
    ) -> Calibration:
        """A calibration from a polygon in pixels of a ``width`` x ``height`` photo, checked by
        :func:`check_polygon` (every point inside the photo)."""
        if not (width > 0 and height > 0):
            raise CalibrationError(f"expected a positive photo size, got {width}x{height}")
        pts = check_polygon(points, width, height)
        return cls(
            [(x / width, y / height) for x, y in pts],
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

    def misfit(self, width: int, height: int, instead: str = "the learned outline") -> str:
        """Why a ``width`` x ``height`` photo does not get this boundary, said to the player.

        Example:
            >>> cal = Calibration.from_pixels([(0, 0), (640, 0), (320, 480)], 640, 480)
            >>> cal.misfit(480, 640)[:58]
            'the calibration was drawn on a 4:3 photo, this one is 3:4 '
        """
        drawn = _ratio(self.aspect) if self.aspect else "another shape"
        return (
            f"the calibration was drawn on a {drawn} photo, this one is "
            f"{_ratio(width / height)} ({width}x{height}): read with {instead} instead; "
            "calibrate again for this camera shape"
        )

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
        """The stored calibration, or None when there is none. A file without ``format`` or
        ``aspect`` (an older dicecam's) fits photos of any shape.

        Raises:
            CalibrationError: the path holds no dicecam calibration this dicecam can read (a
                broken or truncated file, a folder, a newer format); the file is left as it is.
        """
        path = Path(path) if path is not None else calibration_path()
        if not path.exists():
            return None
        if not path.is_file():
            raise CalibrationError(f"calibration {path}: expected a file, got a folder")
        try:
            return cls._from_file(path)
        except CalibrationError as exc:
            raise CalibrationError(
                f"{exc}; fix the file or remove it (dicecam calibrate --clear) and calibrate again"
            ) from None

    @classmethod
    def _from_file(cls, path: Path) -> Calibration:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"cannot read calibration {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("points"), list):
            raise CalibrationError(
                f"{path}: expected a JSON object with a 'points' list, got "
                f"{type(data).__name__ if not isinstance(data, dict) else sorted(data)}"
            )
        version = data.get("format", FORMAT)
        if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT:
            raise CalibrationError(
                f"{path}: written by a newer dicecam (format {version!r}; this one reads format "
                f"{FORMAT} and older)"
            )
        image, aspect = data.get("image"), data.get("aspect")
        try:
            if aspect is not None and not (
                isinstance(aspect, int | float) and math.isfinite(aspect) and aspect > 0
            ):
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
