"""Off-table figures of an evaluation: dice off the table found, busts caught, false busts.

:class:`TableCounts` is filled photo by photo, by ``dicecam eval`` (through
:class:`vision.metrics.EvalResult`) and by :func:`vision.table.evaluate_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vision.matching import ROLLING, TruthDie
from vision.types import Reading

__all__ = ["TableCounts"]


@dataclass(slots=True)
class TableCounts:
    """Off-table figures, counted only on photos whose sidecar gives every die's state."""

    images: int = 0
    truth_off: int = 0
    found_off: int = 0
    """True off-table dice that were matched and predicted ``on_table=False``."""
    unseen_off: int = 0
    """Of :attr:`truth_off`, the dice in photos with no playing surface in view at all (every die
    fell off and the camera looks at the floor): no outline can show them off."""
    unseen_found: int = 0
    """Of :attr:`unseen_off`, those found off the table."""
    predicted_off: int = 0
    predicted_off_right: int = 0
    clean_images: int = 0
    """Photos with no die off the table (a bust here would be false)."""
    false_busts: int = 0
    false_bust_images: list[str] = field(default_factory=list)
    """Names of the photos busted falsely (for looking at them)."""
    unseen_busts: int = 0
    """Of :attr:`false_busts`, those read short of the dice count only by dice the photo does
    not show (hidden behind others or out of the frame, on the table): no reader could find them,
    and the rules call them missing. Counted when the reader was told how many dice were rolled
    (``--expect-rolled``)."""
    unsettled: int = 0
    """Photos with no die off the table but one still in the air above it
    (:data:`~vision.matching.ROLLING`): neither a bust nor a clean roll, left out of both."""
    bust_rolls: int = 0
    """Photos where a die in view (labelled) is off the table: busts a camera can see."""
    busts_caught: int = 0
    """Of :attr:`bust_rolls`, those the reader called a bust (a die called off, or dice missing
    from the count the reader was told): what a player gets, whichever die it was."""
    all_bust_rolls: int = 0
    """Photos of a roll in which any die left the table, in view or not (the sidecar's every
    die): more than :attr:`bust_rolls` when dice fell out of the photo."""
    all_busts_caught: int = 0
    """Of :attr:`all_bust_rolls`, those the reader called a bust. A die out of the photo is caught
    only as missing, when the reader is told how many dice were rolled (``--expect-rolled``)."""

    def add(
        self,
        truth: Sequence[TruthDie],
        reading: Reading,
        pairs: list[tuple[int, int]],
        truth_bust: bool | None = None,
        *,
        settled: bool = True,
        surface_in_view: bool | None = None,
    ) -> None:
        """Count one photo; ``truth_bust`` says whether any die (even a hidden one) left the
        table, default: whether a labelled one did. A photo with no die off is a clean roll
        unless it is not ``settled`` or a labelled die is :data:`~vision.matching.ROLLING`.
        ``surface_in_view=False``: the photo shows no part of the playing surface (its dice
        off the table count in :attr:`unseen_off` as well)."""
        self.images += 1
        by_pred = {j: i for i, j in pairs}
        off = [t.on_table is False for t in truth]
        found = sum(1 for i, j in pairs if off[i] and not reading.dice[j].on_table)
        self.truth_off += sum(off)
        self.found_off += found
        if surface_in_view is False:
            self.unseen_off += sum(off)
            self.unseen_found += found
        for j, die in enumerate(reading.dice):
            if not die.on_table:
                self.predicted_off += 1
                self.predicted_off_right += int(j in by_pred and off[by_pred[j]])
        busted = reading.bust  # a die called off, or dice missing from a count it was told
        if any(off):
            self.bust_rolls += 1
            self.busts_caught += int(busted)
        if any(off) or truth_bust:
            self.all_bust_rolls += 1
            self.all_busts_caught += int(busted)
        if any(off) if truth_bust is None else truth_bust:
            return
        if not settled or any(t.state == ROLLING for t in truth):
            self.unsettled += 1
            return
        self.clean_images += 1
        if busted:
            self.false_busts += 1
            self.false_bust_images.append(reading.image or f"#{self.images}")
            self.unseen_busts += int(_short_of_unseen(reading, len(truth)))

    @property
    def recall(self) -> float | None:
        return ratio(self.found_off, self.truth_off)

    @property
    def recall_in_view(self) -> float | None:
        """Off-table recall over the photos where some of the playing surface is in view."""
        return ratio(self.found_off - self.unseen_found, self.truth_off - self.unseen_off)

    def recall_lines(self, pct: Callable[[float | None], str]) -> list[str]:
        """The report's off-table recall, then :meth:`in_view_lines`."""
        return [
            f"off-table recall  {pct(self.recall)}  ({self.found_off}/{self.truth_off})",
            *self.in_view_lines(pct),
        ]

    def in_view_lines(self, pct: Callable[[float | None], str]) -> list[str]:
        """When some off-table dice lie in photos that show no playing surface, the recall apart
        for the photos that show some and for those that do not (a line); else no line."""
        if not self.unseen_off:
            return []
        seen, seen_found = self.truth_off - self.unseen_off, self.found_off - self.unseen_found
        return [
            f"  surface in view {pct(self.recall_in_view)}  ({seen_found}/{seen}); no surface "
            f"in view (only the floor) {self.unseen_found}/{self.unseen_off}"
        ]

    @property
    def precision(self) -> float | None:
        return ratio(self.predicted_off_right, self.predicted_off)

    @property
    def false_bust_rate(self) -> float | None:
        return ratio(self.false_busts, self.clean_images)

    @property
    def bust_recall(self) -> float | None:
        """Share of the rolls with a die in view off the table that were called a bust."""
        return ratio(self.busts_caught, self.bust_rolls)

    @property
    def all_bust_recall(self) -> float | None:
        """Share of the rolls with any die off the table (in view or not) called a bust."""
        return ratio(self.all_busts_caught, self.all_bust_rolls)

    def bust_lines(self, pct: Callable[[float | None], str]) -> list[str]:
        """The report's lines on whole rolls: busts caught, false busts, and the photos still
        rolling when there are any (``pct`` formats a share)."""
        lines = [
            f"busts caught      {pct(self.bust_recall)}  ({self.busts_caught}/{self.bust_rolls} "
            "photos with a die in view off the table)",
            f"false busts       {pct(self.false_bust_rate)}  ({self.false_busts}/"
            f"{self.clean_images} photos with every die on the table)",
        ]
        if self.unseen_busts:
            lines.append(
                f"  unseen dice     {self.unseen_busts} of them short only of dice the photo does "
                "not show (hidden or out of the frame): missing, as the rules say; "
                f"{self.false_busts - self.unseen_busts} the reader's own"
            )
        if self.all_bust_rolls > self.bust_rolls:  # dice fell out of some photos
            lines.insert(
                1,
                f"  any die off     {pct(self.all_bust_recall)}  ({self.all_busts_caught}/"
                f"{self.all_bust_rolls} rolls with a die off the table, in view or not; one out "
                "of the photo is caught as missing, when told the dice rolled: --expect-rolled)",
            )
        if self.unsettled:
            lines.append(
                f"still rolling     {self.unsettled} photos with a die in the air above the "
                "surface and none off: left out of the busts"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "images": self.images,
            "off_table_dice": self.truth_off,
            "recall": round5(self.recall),
            "recall_surface_in_view": round5(self.recall_in_view),
            "no_surface_in_view": {"off_table_dice": self.unseen_off, "found": self.unseen_found},
            "precision": round5(self.precision),
            "predicted_off": self.predicted_off,
            "predicted_off_right": self.predicted_off_right,
            "false_bust_rate": round5(self.false_bust_rate),
            "clean_images": self.clean_images,
            "false_busts": self.false_busts,
            "false_busts_unseen_dice": self.unseen_busts,
            "unsettled": self.unsettled,
            "bust_rolls": self.bust_rolls,
            "busts_caught": self.busts_caught,
            "bust_recall": round5(self.bust_recall),
            "all_bust_rolls": self.all_bust_rolls,
            "all_busts_caught": self.all_busts_caught,
            "all_bust_recall": round5(self.all_bust_recall),
        }


def _short_of_unseen(reading: Reading, shown: int) -> bool:
    """Whether ``reading`` busts only by dice missing from its count, no more of them than the
    rolled dice its photo does not show (the count told less the ``shown`` labelled dice)."""
    told = reading.expected_dice
    if told is None or reading.off_table or not reading.missing:
        return False
    return reading.missing <= told - shown


def ratio(num: int, den: int) -> float | None:
    """``num / den``, or None when there is nothing to divide by."""
    return num / den if den else None


def round5(x: float | None) -> float | None:
    """A figure rounded for JSON (None stays None)."""
    return None if x is None else round(x, 5)
