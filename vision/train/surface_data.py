"""Training data of the surface outline model: photos and region codes from `dicecam synth`
sidecars, the targets of a one- or three-layer model, and the augmentation
(see :mod:`vision.train.surface`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from vision.table.geometry import dice_map, outline_mask

__all__ = [
    "INPUT",
    "OFF",
    "STRIDE",
    "TABLE_IN_PLAY",
    "TABLE_OUT",
    "TRAY",
    "TRAY_KINDS",
    "UNKNOWN",
    "PHOTOMETRIC",
    "augmented_batch",
    "edge_cells",
    "known_share",
    "load_real_surface",
    "load_surface_split",
    "plain_batch",
    "region_codes",
    "surface_targets",
]

INPUT = 128
STRIDE = 4
TRAY_KINDS = ("tray", "box")
"""Surface kinds whose playing surface is an interior standing on the table."""
OFF, TABLE_OUT, TABLE_IN_PLAY, TRAY = 0, 1, 2, 3
"""Region codes: off the furniture, a table top out of play (a tray stands on it), the table
top in play, a tray or box interior (in play)."""
UNKNOWN = 255
"""Region code of a real photo's pixels whose region nobody labelled (left out of the loss)."""
DIE_MARGIN = 0.25
"""How far around each die of a real photo (a share of its size, per side) is surely surface."""
CACHE_RATIO = 1.375  # images are kept at this multiple of the input and cropped on the fly


def load_surface_split(
    root: str | Path,
    split: str,
    size: int = round(INPUT * CACHE_RATIO),
    limit: int | None = None,
    *,
    dice: bool = False,
    unreadable: list[Path] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Images (N, size, size, 3 uint8 RGB) and region codes (N, size, size uint8, see
    :func:`region_codes`) of a split. ``dice`` adds a fourth channel: the map of where the
    sidecar's labelled dice lie (:func:`~vision.table.geometry.dice_map`), every state included,
    as the reader's boxes would give it.

    Samples whose sidecar or image is missing or unreadable (a set still being written) are
    skipped; the path of an image that cannot be read is added to ``unreadable`` (when given),
    for the trainer to say.

    Raises:
        FileNotFoundError: no ``meta/<split>`` folder (or no usable sample) under ``root``.
    """
    import cv2

    from .crops import read_photo

    root = Path(root)
    meta_dir = root / "meta" / split
    if not meta_dir.is_dir():
        raise FileNotFoundError(f"expected sidecars in {meta_dir} (a `dicecam synth` folder)")
    images, masks = [], []
    for meta_path in sorted(meta_dir.glob("*.json"))[:limit]:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        img_path = root / "images" / split / f"{meta_path.stem}.jpg"
        if "outline" not in meta:
            continue
        bgr = read_photo(img_path, unreadable)
        if bgr is None:
            continue
        image = cv2.resize(bgr[..., ::-1], (size, size), interpolation=cv2.INTER_AREA)
        if dice:
            boxes = [d["box"] for d in meta["dice"] if d.get("labelled", True) and d.get("box")]
            where = dice_map(boxes, int(meta["width"]), int(meta["height"]), (size, size))
            image = np.dstack([image, where])
        images.append(image)
        masks.append(region_codes(meta, (size, size)))
    if not images:
        raise FileNotFoundError(f"no readable samples in {meta_dir}")
    return np.stack(images), np.stack(masks)


def load_real_surface(
    root: str | Path,
    size: int = round(INPUT * CACHE_RATIO),
    limit: int | None = None,
    *,
    dice: bool = False,
    unreadable: list[Path] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Real photos of dice that all lie on the playing surface (a YOLO folder: ``images/`` and
    ``labels/``), as images and region codes like :func:`load_surface_split`'s (``dice``: with
    the map of their labelled dice as a fourth channel).

    Nobody drew their outline, but a table top or tray floor is convex and every die rests on
    it, so the convex hull of the dice (each box grown by :data:`DIE_MARGIN`) is
    :data:`TABLE_IN_PLAY`; every other pixel is :data:`UNKNOWN`. Photos without dice, or that
    cannot be read, are skipped (the latter added to ``unreadable``, when given).

    Raises:
        FileNotFoundError: no photo with labelled dice under ``root``.
    """
    import cv2

    from vision.yolo_dataset import find_images, load_labels

    from .crops import read_photo

    images_found, _ = find_images(root, "train")
    images, masks = [], []
    for path in images_found:
        if limit is not None and len(images) >= limit:
            break
        item = load_labels(path)
        if not item.labels:
            continue
        bgr = read_photo(path, unreadable)
        if bgr is None:
            continue
        codes = np.full((size, size), UNKNOWN, np.uint8)
        corners = []
        for _, cx, cy, w, h in item.labels:
            gw, gh = w * (0.5 + DIE_MARGIN), h * (0.5 + DIE_MARGIN)
            corners += [
                (cx - gw, cy - gh),
                (cx + gw, cy - gh),
                (cx + gw, cy + gh),
                (cx - gw, cy + gh),
            ]
        pts = np.clip(np.array(corners, np.float32), 0.0, 1.0) * size
        hull = cv2.convexHull(pts).reshape(-1, 2)
        cv2.fillConvexPoly(codes, np.round(hull).astype(np.int32), TABLE_IN_PLAY)
        image = cv2.resize(bgr[..., ::-1], (size, size), interpolation=cv2.INTER_AREA)
        if dice:
            boxes = [
                (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2) for _, cx, cy, w, h in item.labels
            ]
            image = np.dstack([image, dice_map(boxes, 1, 1, (size, size))])
        images.append(image)
        masks.append(codes)
    if not images:
        raise FileNotFoundError(f"no readable photos with labelled dice under {root}")
    return np.stack(images), np.stack(masks)


def region_codes(meta: dict[str, Any], size: tuple[int, int]) -> np.ndarray:
    """A sidecar's regions at ``size`` (height, width): :data:`OFF`, :data:`TABLE_OUT`,
    :data:`TABLE_IN_PLAY` or :data:`TRAY` per pixel."""
    from vision.synth.labels import surface_outlines

    w, h = int(meta["width"]), int(meta["height"])
    table, play = surface_outlines(meta)
    tray_scene = meta.get("surface_kind") in TRAY_KINDS
    codes = outline_mask(table, w, h, size) * np.uint8(TABLE_OUT if tray_scene else TABLE_IN_PLAY)
    if tray_scene:
        codes[outline_mask(play, w, h, size) > 0] = TRAY
    return codes


def surface_targets(codes: np.ndarray, size: int, layers: int) -> np.ndarray:
    """(h, w) region codes -> (layers, size, size) float shares per output cell: the playing
    surface for one layer; off, table, tray for three."""
    import cv2

    if layers == 1:
        groups = [(codes >= TABLE_IN_PLAY) & (codes != UNKNOWN)]
    else:
        groups = [codes == OFF, (codes == TABLE_OUT) | (codes == TABLE_IN_PLAY), codes == TRAY]
    return np.stack(
        [
            cv2.resize(g.astype(np.float32), (size, size), interpolation=cv2.INTER_AREA)
            for g in groups
        ]
    )


def known_share(codes: np.ndarray, size: int) -> np.ndarray:
    """(h, w) region codes -> (size, size) share of each output cell whose region is known (1
    everywhere on a synthetic photo); the loss weighs each cell by it."""
    import cv2

    known = (codes != UNKNOWN).astype(np.float32)
    return cv2.resize(known, (size, size), interpolation=cv2.INTER_AREA)


def edge_cells(target: np.ndarray, reach: int = 1) -> np.ndarray:
    """(N, L, h, w) targets -> (N, h, w) 1 on the cells within ``reach`` cells of an edge of
    the playing surface (where the first layer's target changes), 0 elsewhere.

    Example:
        >>> t = np.zeros((1, 1, 6, 6), np.float32); t[0, 0, :, :3] = 1
        >>> edge_cells(t)[0, 0].tolist()
        [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    """
    surface = target[:, 0] if target.shape[1] == 1 else target[:, 1:].sum(1)
    k = 2 * reach + 1
    padded = np.pad(surface, ((0, 0), (reach, reach), (reach, reach)), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))
    spread = windows.max(axis=(-2, -1)) - windows.min(axis=(-2, -1))
    return (spread > 0.25).astype(np.float32)


PHOTOMETRIC = ("mild", "strong", "mixed")
"""Colour jitter of :func:`augmented_batch`: ``mild`` (the default, and the models before
2026-11-26), ``strong`` (dim, washed-out, colour-cast, grey, blurred and noisy photos too) or
``mixed`` (each photo one of the two, at even odds: the shipped model's)."""


def _strong_photometric(rng: np.random.Generator, rgb: np.ndarray) -> np.ndarray:
    """``rgb`` (float 0..255) as a dim or bright, washed-out, colour-cast, grey, blurred or
    noisy camera would give it: the real photos the mild jitter left the model unsure of."""
    import cv2

    grey = rng.random() < 0.15
    if grey:  # a grey photo: no colour cast after
        rgb = np.repeat(rgb.mean(axis=2, keepdims=True), 3, axis=2)
    contrast = rng.uniform(0.4, 1.3)
    rgb = (rgb - rgb.mean()) * contrast + rgb.mean()
    cast = rng.uniform(0.75, 1.25, size=3)
    rgb = rgb * rng.uniform(0.4, 1.5) * (1.0 if grey else cast) + rng.uniform(-25, 25)
    if rng.random() < 0.2:
        rgb = cv2.GaussianBlur(rgb, (0, 0), rng.uniform(0.5, 1.5))
    if rng.random() < 0.2:
        rgb = rgb + rng.normal(0, rng.uniform(3, 12), rgb.shape)
    return rgb


def augmented_batch(
    rng: np.random.Generator,
    images: np.ndarray,
    masks: np.ndarray,
    size_in: int = INPUT,
    layers: int = 1,
    photometric: str = "mild",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random crops of random aspect (a 4:3 photo squeezed to a square), flips, colour jitter
    (of the photo's three channels; a fourth, the dice map, is cropped and flipped with them;
    ``photometric``: see :data:`PHOTOMETRIC`).

    Returns inputs (N, C, S, S), targets (N, layers, S/4, S/4) and the known share of each
    target cell (N, S/4, S/4; see :func:`known_share`). On a partly known cell the target is
    the share of surface among its known pixels.
    """
    import cv2

    n, size, channels = len(images), images.shape[1], images.shape[3]
    side = size_in // STRIDE
    x = np.empty((n, size_in, size_in, channels), np.float32)
    y = np.empty((n, layers, side, side), np.float32)
    w = np.empty((n, side, side), np.float32)
    for i in range(n):
        cw = int(size * rng.uniform(0.7, 1.0))
        ch = int(size * rng.uniform(0.7, 1.0))
        x0, y0 = rng.integers(0, size - cw + 1), rng.integers(0, size - ch + 1)
        img = images[i, y0 : y0 + ch, x0 : x0 + cw]
        codes = masks[i, y0 : y0 + ch, x0 : x0 + cw]
        msk = surface_targets(codes, side, layers)
        known = known_share(codes, side)
        msk = np.where(known > 0, msk / np.maximum(known, 1e-6), 0.0)
        img = cv2.resize(img, (size_in, size_in), interpolation=cv2.INTER_AREA).astype(np.float32)
        if rng.random() < 0.5:
            img, msk, known = img[:, ::-1], msk[:, :, ::-1], known[:, ::-1]
        if rng.random() < 0.3:
            img, msk, known = img[::-1], msk[:, ::-1], known[::-1]
        if photometric == "strong" or (photometric == "mixed" and rng.random() < 0.5):
            x[i, ..., :3] = np.clip(_strong_photometric(rng, img[..., :3]), 0, 255) / 255
        else:
            gain = rng.uniform(0.7, 1.3) * rng.uniform(0.9, 1.1, size=3)
            rgb = (img[..., :3] - 128) * rng.uniform(0.75, 1.25) + 128 + rng.uniform(-25, 25)
            x[i, ..., :3] = np.clip(rgb * gain, 0, 255) / 255
        x[i, ..., 3:] = img[..., 3:] / 255
        y[i] = msk
        w[i] = known
    return x.transpose(0, 3, 1, 2).copy(), y, w


def plain_batch(
    images: np.ndarray, masks: np.ndarray, size_in: int = INPUT
) -> tuple[np.ndarray, np.ndarray]:
    """Validation inputs and their true playing-surface shares (N, size/4, size/4)."""
    import cv2

    x = np.stack(
        [cv2.resize(im, (size_in, size_in), interpolation=cv2.INTER_AREA) for im in images]
    ).reshape(len(images), size_in, size_in, -1)
    y = np.stack([surface_targets(m, size_in // STRIDE, 1)[0] for m in masks])
    return (x.astype(np.float32) / 255).transpose(0, 3, 1, 2).copy(), y
