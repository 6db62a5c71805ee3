"""Scoring a reader against labelled photos: the figures (dice are matched by
:func:`vision.matching.match_dice`).

Example:
    >>> from vision.types import Die, Reading
    >>> truth = [TruthDie(5, (0, 0, 10, 10))]
    >>> reading = Reading(100, 100, [Die(5, (2, 2, 9, 9), 0.9)])
    >>> result = EvalResult()
    >>> pairs = result.add(truth, reading)
    >>> result.face_accuracy, result.recall, result.precision, result.exact_accuracy
    (1.0, 1.0, 1.0, 1.0)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from vision.matching import TruthDie, match_dice
from vision.table_metrics import TableCounts, ratio, round5
from vision.types import Reading

__all__ = ["EvalResult", "TableCounts"]


def _bin_name(lo: float, hi: float) -> str:
    return f"{lo:g}+ px" if math.isinf(hi) else f"{lo:g}-{hi:g} px"


SURE = 0.5
"""Detector confidence from which a die read in a photo labelled with no die makes its label
suspect (:attr:`EvalResult.unlabelled`)."""

SIZE_BINS: tuple[tuple[float, float], ...] = ((0, 20), (20, 30), (30, 50), (50, 80), (80, math.inf))
"""Bins of a true die's size (the longer side of its box, in photo pixels) for recall by size."""


def _by_size(counts: Sequence[Sequence[int]]) -> str:
    """Per-size counts ``[part, all]`` (one per :data:`SIZE_BINS` bin) as ``0-20 px 3/4  ...``,
    empty bins left out."""
    return "  ".join(
        f"{_bin_name(lo, hi)} {k}/{n}"
        for (lo, hi), (k, n) in zip(SIZE_BINS, counts, strict=True)
        if n
    )


def _size_bin(box: Sequence[float]) -> int:
    side = max(box[2] - box[0], box[3] - box[1], 0.0)  # a degenerate box counts as tiny
    return next(k for k, (lo, hi) in enumerate(SIZE_BINS) if lo <= side < hi)


@dataclass(slots=True)
class EvalResult:
    """Figures accumulated over photos; add each with :meth:`add`.

    ``confusion[t][p]`` counts matched dice whose true face is ``t + 1`` read as ``p + 1``.
    """

    images: int = 0
    truth_dice: int = 0
    predicted_dice: int = 0
    matched: int = 0
    face_matched: int = 0
    """Matched dice with a clear true face (cocked truth excluded)."""
    face_correct: int = 0
    exact_images: int = 0
    truth_cocked: int = 0
    found_cocked: int = 0
    """True cocked dice that were matched (by any prediction, cocked or not)."""
    flagged_cocked: int = 0
    """True cocked dice matched by a prediction flagged cocked: cocked recall."""
    flat_flagged_cocked: int = 0
    """Matched dice with a clear top face that the reader flagged cocked (needless re-rolls)."""
    confusion: list[list[int]] = field(default_factory=lambda: [[0] * 6 for _ in range(6)])
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    """(image, message) for photos that could not be read; they count as failed photos."""
    table: TableCounts = field(default_factory=TableCounts)
    mistakes: list[str] = field(default_factory=list)
    """Names of photos not read exactly (for looking at them)."""
    by_size: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in SIZE_BINS])
    """Per :data:`SIZE_BINS` bin of true die size: [dice found, true dice]."""
    unsized: int = 0
    """True dice of unreadable photos whose size is unknown (not even a header): in no bin."""
    faces_by_size: list[list[int]] = field(default_factory=lambda: [[0, 0] for _ in SIZE_BINS])
    """Per :data:`SIZE_BINS` bin of true die size: [dice read right, matched dice with a top
    face] (the face accuracy of dice of that size)."""
    clear: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Dice a sidecar calls clear (:func:`vision.matching.clear_die`; cocked ones left out):
    [read right, found, true]. What the reader misses on a synthetic set apart from dice no one
    could read."""
    counted: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """Photos read with a dice count (``Reading.expected_dice``): [photos, read short (dice
    missing), faint dice added, boxes left out] (see :mod:`vision.count`)."""
    unsure: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Matched dice with a clear true face: [marked unsure, marked unsure and misread, misread]
    (``Die.unsure``: the face classifier's doubt)."""
    checks: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Photos: [the reading asks for a check (``Reading.needs_check``), of them read exactly,
    read wrong with nothing to check: silent errors]."""
    unlabelled: list[tuple[str, int]] = field(default_factory=list)
    """(image, sure dice read) for photos labelled with no die in which the reader finds dice
    it is sure of (:data:`SURE`): most likely a label file left empty, which counts those dice
    as false and the photo as misread."""

    def add(
        self,
        truth: Sequence[TruthDie],
        reading: Reading,
        *,
        states_known: bool = False,
        truth_bust: bool | None = None,
        settled: bool = True,
        surface_in_view: bool | None = None,
    ) -> list[tuple[int, int]]:
        """Score one photo; returns the matched ``(truth, prediction)`` index pairs.

        With ``states_known`` (a sidecar gave every die's state), the photo also counts for the
        off-table figures in :attr:`table` (``truth_bust``, ``settled`` and
        ``surface_in_view``: see :meth:`TableCounts.add`).
        """
        pairs = match_dice([t.box for t in truth], [d.box for d in reading.dice])
        self.images += 1
        self.truth_dice += len(truth)
        self.predicted_dice += len(reading.dice)
        self.matched += len(pairs)
        if reading.latency_ms is not None:
            self.latencies_ms.append(reading.latency_ms)
        exact = len(pairs) == len(truth) == len(reading.dice)
        for i, j in pairs:
            t, p = truth[i], reading.dice[j]
            if t.cocked:
                self.found_cocked += 1
                self.flagged_cocked += int(p.cocked)
                exact = exact and p.cocked
                continue
            self.face_matched += 1
            self.flat_flagged_cocked += int(p.cocked)
            assert t.value is not None
            if 1 <= p.value <= 6:
                self.confusion[t.value - 1][p.value - 1] += 1
            right = p.value == t.value
            self.face_correct += int(right)
            faces = self.faces_by_size[_size_bin(t.box)]
            faces[0] += int(right)
            faces[1] += 1
            misread = not right or p.cocked
            self.unsure[0] += int(p.unsure)
            self.unsure[1] += int(p.unsure and misread)
            self.unsure[2] += int(misread)
            if t.clear:
                self.clear[0] += int(right and not p.cocked)
                self.clear[1] += 1
            exact = exact and right and not p.cocked
        self.truth_cocked += sum(1 for t in truth if t.cocked)
        self.clear[2] += sum(1 for t in truth if t.clear and not t.cocked)
        found = {i for i, _ in pairs}
        for i, t in enumerate(truth):
            counts = self.by_size[_size_bin(t.box)]
            counts[0] += int(i in found)
            counts[1] += 1
        if reading.expected_dice is not None:
            self.counted[0] += 1
            self.counted[1] += int(reading.missing > 0)
            self.counted[2] += reading.added
            self.counted[3] += reading.dropped
        self.exact_images += int(exact)
        check = reading.needs_check
        self.checks[0] += int(check)
        self.checks[1] += int(check and exact)
        self.checks[2] += int(not check and not exact)
        if not exact:
            self.mistakes.append(reading.image or f"#{self.images}")
        self._check_labels(truth, reading)
        if states_known:
            self.table.add(
                truth, reading, pairs, truth_bust, settled=settled, surface_in_view=surface_in_view
            )
        return pairs

    def _check_labels(self, truth: Sequence[TruthDie], reading: Reading) -> None:
        if not truth and (sure := sum(d.confidence >= SURE for d in reading.dice)):
            self.unlabelled.append((reading.image or f"#{self.images}", sure))

    def add_error(
        self, image: str, message: str, truth: Sequence[TruthDie] = (), *, sized: bool = True
    ) -> None:
        """A photo that could not be read: its dice count as missed, the photo as not exact.
        ``sized=False``: the photo's size is unknown (``truth`` boxes not in pixels), so its
        dice go in no size bin (:attr:`unsized`)."""
        self.images += 1
        self.truth_dice += len(truth)
        self.truth_cocked += sum(1 for t in truth if t.cocked)
        self.clear[2] += sum(1 for t in truth if t.clear and not t.cocked)
        for t in truth if sized else ():
            self.by_size[_size_bin(t.box)][1] += 1
        self.unsized += 0 if sized else len(truth)
        self.errors.append((image, message))
        self.mistakes.append(image)

    @property
    def face_accuracy(self) -> float | None:
        return ratio(self.face_correct, self.face_matched)

    @property
    def recall(self) -> float | None:
        return ratio(self.matched, self.truth_dice)

    @property
    def precision(self) -> float | None:
        return ratio(self.matched, self.predicted_dice)

    @property
    def exact_accuracy(self) -> float | None:
        return ratio(self.exact_images, self.images)

    @property
    def cocked_recall(self) -> float | None:
        """Share of true cocked dice the reader found AND flagged cocked."""
        return ratio(self.flagged_cocked, self.truth_cocked)

    @property
    def flat_called_cocked(self) -> float | None:
        """Share of matched flat dice (a clear top face) the reader flagged cocked."""
        return ratio(self.flat_flagged_cocked, self.face_matched)

    @property
    def median_latency_ms(self) -> float | None:
        return statistics.median(self.latencies_ms) if self.latencies_ms else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "images": self.images,
            "failed_images": len(self.errors),
            "truth_dice": self.truth_dice,
            "predicted_dice": self.predicted_dice,
            "matched_dice": self.matched,
            "face_accuracy": round5(self.face_accuracy),
            "face_read_right": self.face_correct,
            "face_matched_dice": self.face_matched,
            "recall": round5(self.recall),
            "precision": round5(self.precision),
            "exact_accuracy": round5(self.exact_accuracy),
            "exact_images": self.exact_images,
            "cocked_dice": self.truth_cocked,
            "cocked_recall": round5(self.cocked_recall),
            "cocked_found": self.found_cocked,
            "cocked_flagged": self.flagged_cocked,
            "flat_called_cocked": self.flat_flagged_cocked,  # a count, as printed beside its share
            "flat_called_cocked_share": round5(self.flat_called_cocked),
            "confusion": [row[:] for row in self.confusion],
            "median_latency_ms": None
            if self.median_latency_ms is None
            else round(self.median_latency_ms, 2),
            "recall_by_size": {
                _bin_name(lo, hi): {"found": f, "dice": n}
                for (lo, hi), (f, n) in zip(SIZE_BINS, self.by_size, strict=True)
            },
            "dice_of_unknown_size": self.unsized,
            "face_accuracy_by_size": {
                _bin_name(lo, hi): {"read_right": r, "dice": n}
                for (lo, hi), (r, n) in zip(SIZE_BINS, self.faces_by_size, strict=True)
            },
            "clear_dice": {
                "dice": self.clear[2],
                "found": self.clear[1],
                "read_right": self.clear[0],
                "face_accuracy": round5(ratio(self.clear[0], self.clear[1])),
                "recall": round5(ratio(self.clear[1], self.clear[2])),
            }
            if self.clear[2]
            else None,
            "dice_count": dict(
                zip(("photos", "short", "added", "dropped"), self.counted, strict=True)
            )
            if self.counted[0]
            else None,
            "unsure_dice": dict(
                zip(("marked", "marked_misread", "misread"), self.unsure, strict=True)
            ),
            "photos_to_check": self.checks[0],
            "photos_to_check_exact": self.checks[1],
            "silent_errors": self.checks[2],
            "table": self.table.to_dict() if self.table.images else None,
            "labels_to_check": [  # names: the figures go into model cards
                {"image": PurePath(i).name, "sure_dice": n} for i, n in self.unlabelled
            ],
            "errors": [{"image": i, "error": m} for i, m in self.errors],
        }

    def format(self) -> str:
        """A readable report: the headline figures and the confusion matrix."""

        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{100 * x:.2f}%"

        lines = [
            f"photos            {self.images}"
            + (f" ({len(self.errors)} unreadable)" if self.errors else ""),
            f"dice              {self.truth_dice} true, {self.predicted_dice} predicted, {self.matched} matched",
            f"face accuracy     {pct(self.face_accuracy)}  ({self.face_correct}/{self.face_matched} matched dice)",
            f"die recall        {pct(self.recall)}",
            f"die precision     {pct(self.precision)}",
            f"exact photos      {pct(self.exact_accuracy)}  ({self.exact_images}/{self.images})",
        ]
        if self.counted[0]:
            told, short, added, dropped = self.counted
            lines.append(
                f"dice count        told on {told} photos: {short} read short (dice missing: a "
                f"Morning Roll bust), {added} faint dice added, {dropped} boxes left out"
            )
        marked, caught, misread = self.unsure
        lines.append(
            f"unsure dice       {marked} marked: {caught} of the {misread} misread, "
            f"{marked - caught} read right"
        )
        to_check, fine, silent = self.checks
        lines.append(
            f"photos to check   {to_check}/{self.images} ({fine} of them read exactly); silent "
            f"errors {silent}/{self.images} (read wrong, nothing marked to check)"
        )
        if self.truth_cocked:
            lines.append(
                f"cocked recall     {pct(self.cocked_recall)}  ({self.flagged_cocked}/"
                f"{self.truth_cocked} flagged cocked; {self.found_cocked} found at all)"
            )
        if self.truth_cocked or self.flat_flagged_cocked:
            lines.append(
                f"flat as cocked    {pct(self.flat_called_cocked)}  ({self.flat_flagged_cocked}/"
                f"{self.face_matched} dice with a clear top face flagged cocked)"
            )
        if self.clear[2]:
            right, found, dice = self.clear
            lines.append(
                f"clear dice        face {pct(ratio(right, found))} ({right}/{found}), "
                f"found {pct(ratio(found, dice))} ({found}/{dice}): at rest, in view, sharp"
            )
        if self.table.images:
            t = self.table
            lines += [
                *t.recall_lines(pct),
                f"off-table prec.   {pct(t.precision)}  ({t.predicted_off_right}/{t.predicted_off})",
                *t.bust_lines(pct),
            ]
        unsized = f"  ({self.unsized} of unreadable photos: size unknown)" if self.unsized else ""
        lines.append("recall by size    " + _by_size(self.by_size) + unsized)
        lines.append("faces by size     " + _by_size(self.faces_by_size))
        if self.unlabelled:
            sure = sum(n for _, n in self.unlabelled)
            lines.append(
                f"labels to check   {len(self.unlabelled)} photos labelled with no die hold "
                f"{sure} dice the reader is sure of (counted false; --mistakes lists them)"
            )
        med = self.median_latency_ms
        lines.append(f"median latency    {'n/a' if med is None else f'{med:.1f} ms'}")
        lines.append("confusion (rows: true face, columns: read as)")
        lines.append("       " + "".join(f"{v:>6}" for v in range(1, 7)))
        for v, row in enumerate(self.confusion, start=1):
            lines.append(f"{v:>6} " + "".join(f"{n:>6}" for n in row))
        return "\n".join(lines)
