"""Checks the importers make of what another tool exported: boxes on the photo, a photo once.

A box wholly outside its photo (percent boxes past 100, pixels read as percent, a photo's size
given wrong) has nothing left once clipped, and a training folder would drop it without a word;
a photo listed twice would split its dice between two photos of the same name. Both are refused
with the file, the entry and what was expected.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from .model import LabelFormatError

__all__ = ["Once", "on_photo"]


def on_photo(
    box: Sequence[float], width: int, height: int, where: str
) -> tuple[float, float, float, float]:
    """``box`` (x1, y1, x2, y2) when some of it lies on the ``width`` x ``height`` photo (a box
    running past an edge is kept: writers clip it).

    Raises:
        LabelFormatError: the box is wholly outside the photo.

    Example:
        >>> on_photo((50, 30, 80, 60), 60, 40, "a.json")
        (50, 30, 80, 60)
        >>> on_photo((100, 100, 110, 110), 60, 40, "a.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        vision.labelling.model.LabelFormatError: a.json: expected a box on the 60x40 photo, ...
    """
    x1, y1, x2, y2 = box
    if x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
        raise LabelFormatError(
            f"{where}: expected a box on the {width}x{height} photo, got ({x1:g}, {y1:g}, "
            f"{x2:g}, {y2:g}) in pixels, wholly outside it"
        )
    return x1, y1, x2, y2


class Once:
    """Refuse a key (a photo's id, its file) seen before in the same file."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._first: dict[Hashable, str] = {}

    def add(self, key: Hashable, shown: str, where: str, entry: str) -> None:
        """Note ``key`` (``shown`` in a message) for ``entry`` (``where`` names file and entry).

        Raises:
            LabelFormatError: ``key`` came before, naming the first entry.
        """
        first = self._first.setdefault(key, entry)
        if first != entry:
            raise LabelFormatError(
                f"{where}: expected each {self.what} once, got {shown} again (first in {first})"
            )
