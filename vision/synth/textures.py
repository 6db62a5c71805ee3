"""Procedural textures: table tops, trays, floors, walls, printed boards, and die faces.

Everything is drawn with numpy and OpenCV (numerals use cv2's built-in Hershey fonts): no file
is read and nothing is downloaded. Images are float32 BGR in [0, 255].
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np

__all__ = ["SURFACE_STYLES", "bevel", "face_texture", "surface_texture"]

SURFACE_STYLES = ("felt", "wood", "paper", "white", "speckled", "plain", "tiles", "carpet", "stone")

STONE_MINERALS = [
    (25, 25, 28),  # black mica, hornblende
    (70, 68, 72),  # dark grey
    (235, 236, 238),  # white feldspar
    (175, 178, 182),  # light grey quartz
    (150, 150, 205),  # pink feldspar (BGR)
    (60, 95, 140),  # brown
]
"""Grain colours of a ``stone`` surface (BGR): granite, terrazzo, speckled worktops."""

# Pip positions on a unit face, per value (x, y in [0, 1]).
_L, _M, _H = 0.25, 0.5, 0.75
PIPS = {
    1: [(_M, _M)],
    2: [(_L, _L), (_H, _H)],
    3: [(_L, _L), (_M, _M), (_H, _H)],
    4: [(_L, _L), (_H, _L), (_L, _H), (_H, _H)],
    5: [(_L, _L), (_H, _L), (_M, _M), (_L, _H), (_H, _H)],
    6: [(_L, _L), (_H, _L), (_L, _M), (_H, _M), (_L, _H), (_H, _H)],
}


@functools.lru_cache(maxsize=1)
def _gauss_bank() -> np.ndarray:
    """A fixed field of standard normal noise; crops of it stand in for fresh noise (fast)."""
    return np.random.default_rng(20260101).standard_normal((1024, 1024), dtype=np.float32)


def white_noise(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Standard normal noise (h, w), a random crop/flip of a fixed bank, tiled if larger."""
    bank = _gauss_bank()
    if h > 1024 or w > 1024:
        reps = (h // 1024 + 1, w // 1024 + 1)
        return np.tile(bank, reps)[:h, :w]
    y, x = int(rng.integers(0, 1025 - h)), int(rng.integers(0, 1025 - w))
    out = bank[y : y + h, x : x + w]
    k = int(rng.integers(4))
    if k & 1:
        out = out[::-1]
    if k & 2:
        out = out[:, ::-1]
    return out


def _noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Smooth value noise in [-1, 1] with features about ``cell`` pixels wide."""
    small = rng.standard_normal((max(2, h // cell + 2), max(2, w // cell + 2))).astype(np.float32)
    big = cv2.resize(small, (w + 2 * cell, h + 2 * cell), interpolation=cv2.INTER_CUBIC)
    return np.clip(big[cell : cell + h, cell : cell + w] / 1.5, -1, 1)


def surface_texture(
    rng: np.random.Generator, style: str, color: tuple[float, float, float], size: int = 512
) -> np.ndarray:
    """A square texture for a flat surface in the given style and base colour (BGR)."""
    h = w = size
    base = np.empty((h, w, 3), np.float32)
    base[:] = color
    if style == "felt":
        n = white_noise(rng, h, w) * 10 + _noise(rng, h, w, 64) * 12
        tex = base * (1 + n[..., None] / 255 * 2)
    elif style == "wood":
        ys = np.arange(h, dtype=np.float32)[:, None]
        warp = _noise(rng, h, w, 96) * 18 + _noise(rng, h, w, 24) * 3
        freq = rng.uniform(0.05, 0.15)
        grain = np.sin((ys + warp) * freq * 2 * math.pi / 4) * 0.5 + 0.5
        fine = white_noise(rng, h, w)
        fine = cv2.GaussianBlur(fine, (0, 0), sigmaX=6, sigmaY=0.6)
        shade = 0.78 + 0.22 * grain + 0.05 * fine + 0.06 * _noise(rng, h, w, 128)
        if rng.random() < 0.5:  # planks
            plank = int(rng.integers(60, 180))
            shade[(np.arange(h) % plank) < 2] *= 0.55
        tex = base * shade[..., None]
        if rng.random() < 0.5:
            tex = np.ascontiguousarray(tex.transpose(1, 0, 2))
    elif style == "paper":
        n = white_noise(rng, h, w) * 3 + _noise(rng, h, w, 90) * 6
        tex = base + n[..., None]
        if rng.random() < 0.4:  # ruled or squared paper
            step = int(rng.integers(18, 40))
            ink = np.array(
                rng.choice([[200, 150, 120], [170, 170, 170], [120, 120, 220]]), np.float32
            )
            for k in range(0, h, step):
                tex[k : k + 1] = tex[k : k + 1] * 0.4 + ink * 0.6
            if rng.random() < 0.5:
                for k in range(0, w, step):
                    tex[:, k : k + 1] = tex[:, k : k + 1] * 0.4 + ink * 0.6
    elif style in ("white", "speckled"):
        n = _noise(rng, h, w, 160) * 6 + white_noise(rng, h, w) * 2
        tex = base + n[..., None]
        count = int(h * w * (rng.uniform(0.002, 0.012) if style == "speckled" else 0.0005))
        ys, xs = rng.integers(0, h, count), rng.integers(0, w, count)
        dots = rng.uniform(-90, 40, size=(count, 1)).astype(np.float32)
        tex[ys, xs] += dots
    elif style == "stone":  # granite or terrazzo: dense grains of a few minerals, pip-sized
        tex = base + (_noise(rng, h, w, 120) * 8 + white_noise(rng, h, w) * 3)[..., None]
        picks = rng.choice(len(STONE_MINERALS), size=int(rng.integers(2, 5)), replace=False)
        for k in picks:
            grain = cv2.GaussianBlur(white_noise(rng, h, w), (0, 0), float(rng.uniform(0.6, 2.0)))
            share = float(rng.uniform(0.06, 0.25))
            mask = grain > np.quantile(grain[::4, ::4], 1 - share)
            tone = np.asarray(STONE_MINERALS[k], np.float32) * np.float32(rng.uniform(0.85, 1.1))
            tex[mask] = tone + white_noise(rng, h, w)[mask][:, None] * 6
    elif style == "tiles":
        step = int(rng.integers(64, 200))
        tex = base + (_noise(rng, h, w, 40) * 8)[..., None]
        grout = np.float32(rng.uniform(0.5, 0.8))
        tex[(np.arange(h) % step) < 3] *= grout
        tex[:, (np.arange(w) % step) < 3] *= grout
    elif style == "carpet":
        n = white_noise(rng, h, w)
        n = cv2.GaussianBlur(n, (0, 0), 1.2) * 40 + _noise(rng, h, w, 50) * 15
        tex = base * (1 + n[..., None] / 255)
    else:  # plain painted / laminate
        tex = base + (_noise(rng, h, w, 200) * 8 + white_noise(rng, h, w) * 1.5)[..., None]
    return np.clip(tex, 0, 255).astype(np.float32)


def wall_texture(rng: np.random.Generator, color: tuple[float, float, float]) -> np.ndarray:
    """A room wall, 64 units high at 4 px a unit (row 255 = floor): paint, a skirting board,
    and a few dark or bright blocks (furniture, doors, windows, pictures)."""
    tex = surface_texture(rng, "plain", color, 256)
    for _ in range(int(rng.integers(0, 5))):
        w, h = int(rng.integers(20, 120)), int(rng.integers(20, 160))
        x = int(rng.integers(-20, 256))
        y = (
            int(rng.integers(256 - h - 120, 256 - h + 1))
            if rng.random() < 0.6
            else int(rng.integers(0, 200))
        )
        grey = float(rng.uniform(30, 230))
        c = tuple(float(np.clip(grey + v, 0, 255)) for v in rng.normal(0, 25, 3))  # muted
        cv2.rectangle(tex, (x, y), (x + w, y + h), c, -1)
        if rng.random() < 0.5:
            cv2.rectangle(tex, (x, y), (x + w, y + h), tuple(v * 0.6 for v in c), 3)
    skirting = tuple(float(v) for v in rng.uniform(60, 240, 3))
    cv2.rectangle(tex, (0, 256 - int(rng.integers(3, 9))), (256, 256), skirting, -1)
    return tex


def draw_board(rng: np.random.Generator, tex: np.ndarray) -> None:
    """Print a board-game-like pattern (hexes, squares or a track) over the whole texture."""
    h, w = tex.shape[:2]
    palette = rng.uniform(30, 240, size=(6, 3))
    kind = rng.choice(["hex", "squares", "track"])
    line = tuple(float(v) for v in rng.uniform(0, 80, 3))
    tex[:] = palette[0]
    if kind == "squares":
        step = int(rng.integers(40, 110))
        for y in range(0, h, step):
            for x in range(0, w, step):
                c = palette[1 + ((x // step + y // step) % 2) * int(rng.integers(1, 5))]
                cv2.rectangle(tex, (x, y), (x + step, y + step), tuple(float(v) for v in c), -1)
                cv2.rectangle(tex, (x, y), (x + step, y + step), line, 2)
    elif kind == "hex":
        r = int(rng.integers(30, 70))
        dx, dy = r * math.sqrt(3), r * 1.5
        for j in range(int(h / dy) + 2):
            for i in range(int(w / dx) + 2):
                cx, cy = i * dx + (dx / 2 if j % 2 else 0), j * dy
                pts = np.array(
                    [
                        [
                            cx + r * math.cos(math.pi / 6 + k * math.pi / 3),
                            cy + r * math.sin(math.pi / 6 + k * math.pi / 3),
                        ]
                        for k in range(6)
                    ],
                    np.int32,
                )
                c = palette[int(rng.integers(1, 6))]
                cv2.fillPoly(tex, [pts], tuple(float(v) for v in c))
                cv2.polylines(tex, [pts], True, line, 2)
                if rng.random() < 0.4:
                    cv2.circle(tex, (int(cx), int(cy)), r // 3, (220, 230, 240), -1)
    else:
        step = int(rng.integers(40, 90))
        for k in range(0, w, step):
            c = palette[int(rng.integers(1, 6))]
            cv2.rectangle(tex, (k, 0), (k + step - 4, step), tuple(float(v) for v in c), -1)
            cv2.rectangle(tex, (k, h - step), (k + step - 4, h), tuple(float(v) for v in c), -1)
        cv2.circle(tex, (w // 2, h // 2), min(h, w) // 4, tuple(float(v) for v in palette[2]), -1)
    tex += white_noise(rng, *tex.shape[:2])[..., None] * 3


@functools.lru_cache(maxsize=8)
def bevel(s: int) -> np.ndarray:
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    edge = np.minimum(np.minimum(xx, s - 1 - xx), np.minimum(yy, s - 1 - yy)) / s
    return np.clip(0.72 + edge * 3.0, 0.72, 1.0)


def face_texture(
    value: int,
    body: tuple[float, float, float],
    pip: tuple[float, float, float],
    *,
    kind: str = "pips",
    size: int = 64,
    pip_radius: float = 0.1,
    corner: float = 0.18,
    opacity: float = 1.0,
    emblem: tuple[float, float, float] | None = None,
) -> np.ndarray:
    """One die face as BGRA float32: body colour, pips or a numeral, rounded corners, bevel.

    ``kind`` is "pips", "numeral" (Hershey digits) or "emblem" (pips, but the 1 is a large
    coloured emblem). Alpha is ``opacity`` on the body, 1 on pips, 0 outside the rounded corners.

    Example:
        >>> face_texture(3, (240, 240, 240), (20, 20, 20)).shape
        (64, 64, 4)
    """
    s = ss = size
    q = 16  # fixed-point subpixel factor for cv2 drawing (shift=4)
    a8 = np.zeros((s, s), np.uint8)
    r = corner * s
    box = np.array([[r, 0], [s - r, 0], [s, r], [s, s - r], [s - r, s], [r, s], [0, s - r], [0, r]])
    cv2.fillPoly(a8, [np.round(box * q).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    for cx, cy in ((r, r), (s - r, r), (r, s - r), (s - r, s - r)):
        cv2.circle(a8, (int(cx * q), int(cy * q)), int(r * q), 255, -1, cv2.LINE_AA, shift=4)
    ink8 = np.zeros((s, s), np.uint8)
    rim8 = np.zeros((s, s), np.uint8)
    if kind == "numeral":
        text = str(value)
        scale = ss / 30.0
        thick = max(2, int(ss / 14))
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, thick)
        org = ((ss - tw) // 2, (ss + th) // 2)
        cv2.putText(ink8, text, org, cv2.FONT_HERSHEY_DUPLEX, scale, 255, thick, cv2.LINE_AA)
        # getTextSize's height overstates the digit's: centre the ink itself, with the bar that
        # tells a 6 from an upside-down 9 a stroke's width under it (not over its bowl)
        bar = max(1, thick // 2) if value in (6, 9) else 0
        ys, xs = np.nonzero(ink8)
        top, bottom = int(ys.min()), int(ys.max()) + 1
        block = bottom - top + (thick + bar if bar else 0)
        dx = (ss - int(xs.min()) - int(xs.max()) - 1) // 2
        dy = (ss - block) // 2 - top
        ink8 = cv2.warpAffine(ink8, np.float32([[1, 0, dx], [0, 1, dy]]), (ss, ss))
        if bar:
            y = bottom + dy + thick + bar // 2
            cv2.line(ink8, (ss // 3, y), (2 * ss // 3, y), 255, bar, cv2.LINE_AA)
    elif kind == "emblem" and value == 1:
        pts = []
        for k in range(10):
            rad = ss * (0.36 if k % 2 == 0 else 0.15)
            a = -math.pi / 2 + k * math.pi / 5
            pts.append([ss / 2 + rad * math.cos(a), ss / 2 + rad * math.sin(a)])
        cv2.fillPoly(
            ink8, [np.round(np.array(pts) * q).astype(np.int32)], 255, cv2.LINE_AA, shift=4
        )
    else:
        pr = max(1.5, pip_radius * ss)
        for px, py in PIPS[value]:
            cv2.circle(
                ink8,
                (int(px * ss * q), int(py * ss * q)),
                int(pr * q),
                255,
                -1,
                cv2.LINE_AA,
                shift=4,
            )
    ink = ink8.astype(np.float32) / 255.0
    ink_color = np.array(
        emblem if (kind == "emblem" and value == 1 and emblem) else pip, np.float32
    )
    out = np.empty((s, s, 4), np.float32)
    out[..., :3] = np.float32(body) + (ink_color - np.float32(body)) * ink[..., None]
    out[..., :3] *= (1.0 - 0.3 * rim8.astype(np.float32) / 255.0)[..., None]
    alpha = a8.astype(np.float32) / 255.0
    out[..., 3] = np.maximum(alpha * opacity, ink * alpha)
    # bevel: darken towards the edges
    out[..., :3] *= bevel(s)[..., None]
    return out
