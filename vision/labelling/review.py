"""The review list: every die read, least confident first, so a person checks those first."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from vision.atomic import atomic_write

from .model import LabelledPhoto, label_confidence

__all__ = ["ReviewRow", "review_rows", "write_review"]

FIELDS = ("photo", "die", "value", "confidence", "x1", "y1", "x2", "y2", "flags")


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One line of the review list. A photo with no die found gets one row with ``die`` -1."""

    photo: str
    die: int
    value: int | None
    confidence: float | None
    x1: float | None
    y1: float | None
    x2: float | None
    y2: float | None
    flags: str


def review_rows(photos: Sequence[LabelledPhoto], *, low: float = 0.5) -> list[ReviewRow]:
    """Rows sorted by confidence, lowest first; photos with no dice come before all of them.

    A die's confidence here is the lower of the detector's and the face classifier's (when it
    read the value), so values the reader doubts come up as early as boxes it doubts. ``flags``
    joins ``no_dice``, ``low_confidence`` (below ``low``), ``unsure`` (the face classifier's
    doubt, :attr:`vision.types.Die.unsure`), ``faint``, ``off_table``, ``cocked``.
    """
    rows = []
    for photo in photos:
        if not photo.dice:
            rows.append(ReviewRow(photo.name, -1, None, None, None, None, None, None, "no_dice"))
        for i, die in enumerate(photo.dice):
            flags = [
                f
                for f, on in (
                    ("low_confidence", die.confidence < low),
                    ("unsure", die.unsure),
                    ("faint", die.faint),
                    ("off_table", not die.on_table),
                    ("cocked", die.cocked),
                )
                if on
            ]
            x1, y1, x2, y2 = (round(float(v), 1) for v in die.box)
            conf = round(label_confidence(die), 4)
            rows.append(ReviewRow(photo.name, i, die.value, conf, x1, y1, x2, y2, ";".join(flags)))
    return sorted(
        rows, key=lambda r: (-1.0 if r.confidence is None else r.confidence, r.photo, r.die)
    )


def write_review(
    photos: Sequence[LabelledPhoto], out: str | os.PathLike[str], *, low: float = 0.5
) -> tuple[Path, Path]:
    """Write ``review.csv`` and ``review.json`` into ``out``; return both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = review_rows(photos, low=low)
    csv_path, json_path = out / "review.csv", out / "review.json"
    table = io.StringIO(newline="")
    writer = csv.writer(table, lineterminator="\n")  # as every file dicecam writes
    writer.writerow(FIELDS)
    for row in rows:
        writer.writerow(["" if v is None else v for v in asdict(row).values()])
    atomic_write(csv_path, table.getvalue())
    atomic_write(json_path, json.dumps([asdict(r) for r in rows], indent=1))
    return csv_path, json_path
