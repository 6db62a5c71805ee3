"""How legible a synthetic die's top face is in the finished photo.

Lighting, exposure and a die's own colours can wash its pips out: pale pink dice with white pips
under a bright lamp show a blank white face, which no one can read. :func:`face_contrast`
measures, in the photo as written (after exposure, blur and noise), how far the mean colour of
the top face's pips (or numeral) lies from the mean colour of the rest of that face, over the
pixels where the die shows. The sidecar keeps it per die (``face_contrast``), and
:func:`vision.matching.clear_die` counts a die as readable only from
:data:`vision.matching.CLEAR_MIN_CONTRAST` up.

Example:
    >>> ink = ink_mask({"kind": "pips", "pip_radius": 0.1, "corner": 0.2}, 1)
    >>> ink.shape, round(float(ink.max()), 2)
    ((64, 64), 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

from .render import face_frames
from .textures import bevel, face_texture

if TYPE_CHECKING:
    from .camera import Camera
    from .physics import DiePose

__all__ = ["face_contrast", "ink_mask"]

INK_SIZE = 64
"""Side of the face texture the ink mask is drawn at (the renderer's own)."""


def ink_mask(style: dict, value: int) -> np.ndarray:
    """Where face ``value`` of a die in ``style`` is inked (pips, numeral or emblem), 0..1,
    on the face texture's square: the texture drawn black with white ink, bevel undone."""
    tex = face_texture(
        value,
        (0.0, 0.0, 0.0),
        (255.0, 255.0, 255.0),
        kind=style.get("kind", "pips"),
        size=INK_SIZE,
        pip_radius=style.get("pip_radius", 0.1),
        corner=style.get("corner", 0.18),
        emblem=(255.0, 255.0, 255.0),
    )
    return np.clip(tex[..., 0] / (255.0 * bevel(INK_SIZE)), 0.0, 1.0)


def face_contrast(
    img: np.ndarray,
    cam: Camera,
    pose: DiePose,
    die_id: int,
    ids: np.ndarray,
    ink: dict[int, np.ndarray] | None = None,
    style: dict | None = None,
) -> float | None:
    """CIE L*a*b* distance (CIE76, 0 to about 170; 2.3 is a just noticeable difference) between
    the mean colour of the top face's ink and that of the bare body just around it in ``img``, over the pixels where the die ``die_id`` shows in
    the die-id buffer ``ids``; 0.0 when no pixel of ink or of body shows, None when the top face
    is turned away from the camera or out of the frame.

    ``ink`` maps face values to :func:`ink_mask` squares (drawn from ``style`` when missing).
    """
    frames = face_frames(pose)
    value, normal, corners = max(frames, key=lambda f: f[1][2])
    if normal @ (cam.C - corners.mean(0)) <= 0 or cam.depth(corners).min() <= 1e-3:
        return None
    cache = {} if ink is None else ink
    if value not in cache:
        cache[value] = ink_mask(style or {}, value)
    mask = cache[value]
    fp = cam.project(corners).astype(np.float32)
    h, w = img.shape[:2]
    x0, y0 = np.floor(fp.min(0)).astype(int)
    x1, y1 = np.ceil(fp.max(0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    s = mask.shape[0]
    src = np.array([[0, 0], [s, 0], [s, s], [0, s]], np.float32)
    H = cv2.getPerspectiveTransform(src, fp - np.array([x0, y0], np.float32))
    size = (x1 - x0, y1 - y0)
    inked = cv2.warpPerspective(mask, H, size, flags=cv2.INTER_LINEAR)
    face = cv2.warpPerspective(np.ones_like(mask), H, size, flags=cv2.INTER_NEAREST)
    shows = ids[y0:y1, x0:x1] == die_id
    pips = shows & (inked > 0.5)
    # the bare body just around the ink (a ring 1-3 px out), inside the face: the face's bevel
    # darkens its edges, so a pale body there would stand out from blank pips
    inner = cv2.erode(face.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    near = cv2.dilate((inked > 0.05).astype(np.uint8), np.ones((3, 3), np.uint8))
    ring = (cv2.dilate(near, np.ones((5, 5), np.uint8)) > 0) & (near == 0)
    body = shows & inner & ring
    if not pips.any() or not body.any():
        return 0.0
    # CIE L*a*b* (CIE76 distance): pale pips on a pale body differ little to the eye even
    # where their BGR values differ by as much as dark pips on a dark body
    patch = cv2.cvtColor(img[y0:y1, x0:x1].astype(np.float32) / 255.0, cv2.COLOR_BGR2LAB)
    return float(np.linalg.norm(patch[pips].mean(0) - patch[body].mean(0)))
