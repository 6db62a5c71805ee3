"""Matching a reader's dice to labelled ones, by box centre, and what the labels say of them.

Public datasets draw boxes differently (the whole die with its sides, the top face only, or just
the pips), so a prediction matches a true die when its centre lies inside the true box or the true
centre lies inside the predicted box; pairs are then made one-to-one, nearest centres first.

Example:
    >>> match_dice([(0, 0, 10, 10)], [(2, 2, 9, 9)])
    [(0, 0)]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vision.boxes import box_centre
from vision.types import Box

__all__ = [
    "CLEAR_MAX_DEFOCUS",
    "CLEAR_MIN_CONTRAST",
    "CLEAR_MIN_VISIBLE",
    "OFF_TABLE_STATES",
    "ROLLING",
    "TruthDie",
    "clear_die",
    "face_legible",
    "match_dice",
    "roll_bust",
    "surface_in_view",
    "table_state",
]

OFF_TABLE_STATES = frozenset({"off_table", "in_air"})
"""Die states (synthetic ``meta/`` sidecars) in which a die is not on the playing surface: at
rest off it, or in the air beyond its edge (see :func:`table_state`)."""
ROLLING = "rolling"
"""A die in the air above the playing surface: it has not landed, so it is neither on the table
nor off it, and a photo with such a die and none off is neither a bust nor a clean roll."""

CLEAR_MIN_VISIBLE = 0.9
"""A clear die shows at least this share of itself (the rest hidden by other dice or the frame)."""
CLEAR_MAX_DEFOCUS = 1.0
"""A clear die's photo is blurred by at most this Gaussian sigma (pixels), with no camera shake."""
CLEAR_MIN_CONTRAST = 10.0
"""A clear die's top face shows its pips (or numeral) at least this far from the colour of the
body around them in the photo (the sidecar's ``face_contrast``, a CIE L*a*b* distance:
:mod:`vision.synth.legibility`). Under it, light and exposure wash them out (pale dice under a
bright lamp, dark ones in shadow). Looked at by eye on pale pink dice with white pips
(2026-11-26): under 10, faces show blank or all but blank; from 10 to 14, most show faint pips;
from 15 up, nearly all show their pips."""


def face_legible(die: Mapping[str, Any]) -> bool | None:
    """Whether a synthetic die's top face can be made out in its photo: its ``face_contrast``
    at least :data:`CLEAR_MIN_CONTRAST` (None from the sidecar: the top face is turned away or
    out of the frame, not legible). None when the sidecar does not measure it (older sets).

    Example:
        >>> face_legible({"face_contrast": 3.0}), face_legible({"face_contrast": 150.0})
        (False, True)
        >>> face_legible({"state": "table"}) is None
        True
    """
    if "face_contrast" not in die:
        return None
    contrast = die["face_contrast"]
    return contrast is not None and contrast >= CLEAR_MIN_CONTRAST


def clear_die(die: Mapping[str, Any], post: Mapping[str, Any] | None) -> bool | None:
    """Whether a synthetic die (a sidecar's ``dice`` entry) could be read by anyone: at rest and
    flat (on or off the table, not in the air, rolling or cocked), at least 90% in view, in a
    photo without camera shake or more than a 1 px defocus blur (the sidecar's ``scene.post``),
    its top face not washed out (:func:`face_legible`, where the sidecar measures it).
    None when the sidecar does not say (older sets: no ``moving`` or no ``post``).

    Example:
        >>> post = {"motion_blur_px": 0.0, "defocus_sigma": 0.5}
        >>> clear_die({"state": "table", "moving": False, "visible": 1.0}, post)
        True
        >>> clear_die({"state": "table", "moving": True, "visible": 1.0}, post)
        False
    """
    if post is None or "moving" not in die or "visible" not in die:
        return None
    return bool(
        die.get("state") in ("table", "off_table")
        and not die["moving"]
        and die["visible"] >= CLEAR_MIN_VISIBLE
        and not post.get("motion_blur_px", 0.0)
        and post.get("defocus_sigma", 0.0) <= CLEAR_MAX_DEFOCUS
        and face_legible(die) is not False
    )


def table_state(die: Mapping[str, Any], surface: Mapping[str, Any] | None) -> str | None:
    """A sidecar die's state for the off-table figures: its ``state``, except that a die in the
    air (``in_air``) above the playing surface is :data:`ROLLING`; one beyond the surface's edge
    stays ``in_air``, off the table. ``surface`` is the sidecar's ``scene.surface`` (half extents
    ``table``, or ``interior`` for a tray or box, centred on the die positions' origin); without
    it, or without the die's ``position``, a die in the air counts as off, as it used to.

    Example:
        >>> surface = {"table": [10.0, 8.0], "interior": None}
        >>> table_state({"state": "in_air", "position": [2.0, -3.0, 4.0]}, surface)
        'rolling'
        >>> table_state({"state": "in_air", "position": [12.0, 0.0, 4.0]}, surface)
        'in_air'
        >>> table_state({"state": "in_air"}, surface)  # no position: off
        'in_air'
    """
    state = die.get("state")
    if state != "in_air" or not isinstance(surface, Mapping):
        return state
    try:
        x, y = (float(v) for v in die["position"][:2])
        hx, hy = (float(v) for v in (surface.get("interior") or surface["table"])[:2])
    except (KeyError, TypeError, ValueError):  # an older or odd sidecar: off, as it used to be
        return state
    return ROLLING if abs(x) <= hx and abs(y) <= hy else state


def roll_bust(states: Iterable[str | None]) -> bool | None:
    """Whether a roll is a bust from the :func:`table_state` of all its dice (hidden ones too):
    True when one is off the table, None when none is but one is still :data:`ROLLING`, else
    False.

    Example:
        >>> roll_bust(["table", "off_table"]), roll_bust(["table", "rolling"]), roll_bust(["table"])
        (True, None, False)
    """
    states = list(states)
    if any(st in OFF_TABLE_STATES for st in states):
        return True
    return None if ROLLING in states else False


def surface_in_view(sidecar: Mapping[str, Any]) -> bool | None:
    """Whether a synthetic sidecar's photo shows any of the playing surface: its ``outline`` is
    a polygon or null (the surface fills the frame), or ``[]`` when every die fell off and the
    camera looks at the floor (False); None when the sidecar has no outline.

    Example:
        >>> surface_in_view({"outline": []}), surface_in_view({"outline": None}), surface_in_view({})
        (False, True, None)
    """
    if "outline" not in sidecar:
        return None
    return sidecar["outline"] != []


@dataclass(slots=True)
class TruthDie:
    """A labelled die: ``value`` 1..6, or None for a cocked die (no clear top face)."""

    value: int | None
    box: Box
    state: str | None = None
    """'table', 'off_table', 'in_air' (beyond the surface), 'rolling' (in the air above it) or
    'cocked' when a sidecar says so (:func:`table_state`); None when unknown."""
    clear: bool | None = None
    """Whether anyone could read it (:func:`clear_die`); None when unknown."""

    @property
    def cocked(self) -> bool:
        return self.value is None or self.state == "cocked"

    @property
    def on_table(self) -> bool | None:
        """Whether it lies on the playing surface; None when unknown or still rolling."""
        if self.state is None or self.state == ROLLING:
            return None
        return self.state not in OFF_TABLE_STATES


def _inside(point: tuple[float, float], box: Sequence[float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def match_dice(truth: Sequence[Box], predicted: Sequence[Box]) -> list[tuple[int, int]]:
    """One-to-one ``(truth_index, predicted_index)`` pairs, matched by box centre.

    A pair is possible when either box's centre lies inside the other box; possible pairs are
    taken greedily, nearest centres first.

    Example:
        >>> match_dice([(0, 0, 10, 10), (20, 0, 30, 10)], [(21, 1, 29, 9), (50, 50, 60, 60)])
        [(1, 0)]
    """
    tc = [box_centre(b) for b in truth]
    pc = [box_centre(b) for b in predicted]
    candidates: list[tuple[float, int, int]] = []
    for i, tb in enumerate(truth):
        for j, pb in enumerate(predicted):
            if _inside(pc[j], tb) or _inside(tc[i], pb):
                candidates.append((math.dist(tc[i], pc[j]), i, j))
    candidates.sort()
    used_t: set[int] = set()
    used_p: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, i, j in candidates:
        if i not in used_t and j not in used_p:
            used_t.add(i)
            used_p.add(j)
            pairs.append((i, j))
    return sorted(pairs)
