"""The table logic alone, on the true dice of a synthetic set: off-table recall and precision,
false-bust rate, outline IoU and outline time.

The reader is left out: every labelled die of a ``dicecam synth`` folder is placed at its true
box, the outline comes from a :class:`TableStage` (the learned model, a calibration) or from the
sidecar itself (``stage=None``: the ceiling of the logic), and each die's ``on_table`` is compared
with its sidecar state (``off_table``, and ``in_air`` beyond the surface's edge, are off; a die
in the air above the surface is still rolling and left out: :func:`vision.matching.table_state`).

Example (``dicecam synth --n 3 --seed 7 --size 320 240 --val-fraction 0.99``; the README's
figures are of ``--n 200``, ``runs/synth-test7``):
    >>> import tempfile
    >>> from vision.synth import write_dataset
    >>> from vision.table import TableStage
    >>> folder = tempfile.TemporaryDirectory()
    >>> _ = write_dataset(folder.name, 3, seed=7, size=(320, 240), val_fraction=0.99)
    >>> report = evaluate_table(folder.name, TableStage.default())  # the learned outline
    >>> print(report.format())  # doctest: +ELLIPSIS
    photos            2
    off-table recall  -  (0/0 dice, in the air 0/0)
    ...
    false busts       0.00%  (0/2 photos with every die on the table)
    ...
    >>> folder.cleanup()
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vision.matching import TruthDie, roll_bust, surface_in_view, table_state
from vision.table.geometry import outline_mask
from vision.table.logic import TOLERANCE, TableStage, apply_table
from vision.table_metrics import TableCounts
from vision.types import Die, Reading

__all__ = ["TableReport", "evaluate_table"]


@dataclass(slots=True)
class TableReport:
    """Figures of :func:`evaluate_table`."""

    counts: TableCounts = field(default_factory=TableCounts)
    ious: list[float] = field(default_factory=list)
    outline_ms: list[float] = field(default_factory=list)
    in_air: int = 0
    """Dice in the air beyond the surface's edge (off the table)."""
    in_air_found: int = 0
    missed: list[str] = field(default_factory=list)
    """Photos with an off-table die called on the table."""
    unreadable: list[str] = field(default_factory=list)
    """Photos (sidecar stems) whose image is missing or cannot be read: left out of every
    figure (with a ``stage``, which looks at the photo)."""
    kinds: dict[str, list[float]] = field(default_factory=dict)
    """Per surface kind of the sidecars (table, tray, box, board): [photos, outline IoU sum,
    resting off-table dice, of them found off]."""

    @property
    def false_busts(self) -> list[str]:
        """Photos (sidecar stems) with every die on the table that were called a bust."""
        return self.counts.false_bust_images

    def by_kind(self) -> dict[str, dict[str, Any]]:
        """Per surface kind: photos, outline mean IoU (None for the true outline) and the
        recall of off-table dice resting on something (in-air ones left out)."""
        out = {}
        for kind, (n, iou, off, found) in sorted(self.kinds.items()):
            out[kind] = {
                "photos": int(n),
                "outline_mean_iou": round(iou / n, 4) if self.ious and n else None,
                "resting_off": int(off),
                "resting_off_found": int(found),
                "resting_off_recall": round(found / off, 4) if off else None,
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        c = self.counts
        return c.to_dict() | {
            "in_air_dice": self.in_air,
            "in_air_recall": round(self.in_air_found / self.in_air, 4) if self.in_air else None,
            "outline_mean_iou": round(statistics.fmean(self.ious), 4) if self.ious else None,
            "outline_ms_median": round(statistics.median(self.outline_ms), 2)
            if self.outline_ms
            else None,
            "by_kind": self.by_kind(),
            "unreadable_photos": len(self.unreadable),
        }

    def format(self) -> str:
        d = self.to_dict()
        pct = lambda v: "-" if v is None else f"{100 * v:.2f}%"  # noqa: E731
        c = self.counts
        lines = [
            f"photos            {c.images}",
            f"off-table recall  {pct(c.recall)}  ({c.found_off}/{c.truth_off} dice, "
            f"in the air {self.in_air_found}/{self.in_air})",
            *c.in_view_lines(pct),
            f"off-table prec.   {pct(c.precision)}  ({c.predicted_off_right}/{c.predicted_off})",
            *c.bust_lines(pct),
        ]
        if self.unreadable:
            lines.insert(
                1,
                f"unreadable        {len(self.unreadable)} photos left out (no image, or not "
                f"one): {', '.join(self.unreadable[:5])}"
                + (", ..." if len(self.unreadable) > 5 else ""),
            )
        if self.ious:
            lines.append(f"outline mean IoU  {d['outline_mean_iou']:.4f}")
        if self.outline_ms:
            lines.append(f"outline time      {d['outline_ms_median']:.2f} ms median")
        for kind, k in d["by_kind"].items():
            iou = (
                ""
                if k["outline_mean_iou"] is None
                else f"outline IoU {k['outline_mean_iou']:.3f}, "
            )
            lines.append(
                f"  {kind:<6} {k['photos']:>4} photos: {iou}resting off-table dice found "
                f"{k['resting_off_found']}/{k['resting_off']}"
            )
        return "\n".join(lines)


def evaluate_table(
    dataset: str | Path,
    stage: TableStage | None = None,
    *,
    split: str = "val",
    limit: int | None = None,
    tolerance: float = TOLERANCE,
) -> TableReport:
    """Score the table logic on the true dice of ``dataset``'s ``split`` (see module doc).

    A ``stage`` runs as the reader runs it (:meth:`TableStage.apply`: its outline, its own
    tolerance, its off-table die model); ``tolerance`` applies to the true outline only.

    Raises:
        FileNotFoundError: no ``meta/<split>`` sidecars under ``dataset``.
    """
    import cv2

    root = Path(dataset)
    meta_dir = root / "meta" / split
    if not meta_dir.is_dir():
        meta_dir = root / "meta"
    metas = sorted(meta_dir.glob("*.json"))[:limit]
    if not metas:
        raise FileNotFoundError(
            f"expected sidecars in {root}/meta/{split}/ (a `dicecam synth` set)"
        )
    report = TableReport()
    for path in metas:
        meta = json.loads(path.read_text(encoding="utf-8"))
        w, h = int(meta["width"]), int(meta["height"])
        dice = [d for d in meta["dice"] if d.get("labelled", True) and d.get("box")]
        surface = (meta.get("scene") or {}).get("surface")
        truth = [TruthDie(d["value"], tuple(d["box"]), table_state(d, surface)) for d in dice]
        bust = roll_bust(table_state(d, surface) for d in meta["dice"])  # hidden dice too
        reading = Reading(w, h, [Die(d["value"], tuple(d["box"]), 1.0) for d in dice])
        reading.image = path.stem
        iou = 1.0
        if stage is None:
            outline = meta["outline"]
            outline = None if outline is None else [tuple(p) for p in outline]
            apply_table(reading, outline, tolerance=tolerance)
        else:
            bgr = cv2.imread(
                str(path.parent.parent.parent / "images" / path.parent.name / f"{path.stem}.jpg")
            )
            if bgr is None:
                bgr = cv2.imread(str(root / "images" / f"{path.stem}.jpg"))
            if bgr is None:  # it was left out without a word
                report.unreadable.append(path.stem)
                continue
            rgb = np.ascontiguousarray(bgr[..., ::-1])
            t0 = time.perf_counter()
            stage.apply(reading, rgb)  # the outline, then the off-table die model if any
            report.outline_ms.append((time.perf_counter() - t0) * 1000)
            true_mask = outline_mask(meta["outline"], w, h, (160, 160))
            pred_mask = outline_mask(reading.outline, w, h, (160, 160))
            union = (true_mask | pred_mask).sum()
            iou = float((true_mask & pred_mask).sum() / union) if union else 1.0
            report.ious.append(iou)
        pairs = [(i, i) for i in range(len(truth))]
        report.counts.add(
            truth,
            reading,
            pairs,
            bool(bust),
            settled=bust is not None,
            surface_in_view=surface_in_view(meta),
        )
        kind = report.kinds.setdefault(str(meta.get("surface_kind", "unknown")), [0, 0.0, 0, 0])
        kind[0] += 1
        kind[1] += iou
        for t, die in zip(truth, reading.dice, strict=True):
            if t.state == "in_air":
                report.in_air += 1
                report.in_air_found += int(not die.on_table)
            elif t.on_table is False:
                kind[2] += 1
                kind[3] += int(not die.on_table)
        off = [t.on_table is False for t in truth]
        if any(o and die.on_table for o, die in zip(off, reading.dice, strict=True)):
            report.missed.append(path.stem)
    return report
