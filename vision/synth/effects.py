"""Camera effects: motion blur of moving dice, uneven light, white balance, blur, sensor noise."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .camera import Camera
from .labels import die_corners
from .physics import DiePose
from .render import Canvas
from .textures import white_noise

__all__ = ["motion_blur_die", "post_process"]


def motion_blur_die(canvas: Canvas, pose: DiePose, die_id: int, shutter: float) -> None:
    """Smear a moving die along its projected motion during the exposure."""
    cam = canvas.cam
    pts = die_corners(pose)
    moved = pts + pose.velocity * shutter
    if min(cam.depth(pts).min(), cam.depth(moved).min()) < 0.5:
        return
    a, b = cam.project(pts), cam.project(moved)
    d = (b - a).mean(0)
    length = float(np.hypot(*d))
    if length < 2.0:
        return
    length = min(length, 60.0)
    both = np.concatenate([a, b])
    pad = int(length) + 2
    x0, y0 = np.maximum(np.floor(both.min(0)).astype(int) - pad, 0)
    x1, y1 = np.minimum(np.ceil(both.max(0)).astype(int) + pad, [cam.width, cam.height])
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    n = int(length) | 1
    k = np.zeros((n, n), np.float32)
    k[n // 2, :] = 1.0
    angle = -math.degrees(math.atan2(d[1], d[0]))
    k = cv2.warpAffine(k, cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), angle, 1.0), (n, n))
    k /= max(float(k.sum()), 1e-6)
    roi = canvas.img[y0:y1, x0:x1]
    m = (canvas.ids[y0:y1, x0:x1] == die_id).astype(np.float32)
    smear = cv2.filter2D(roi * m[..., None], -1, k, borderType=cv2.BORDER_CONSTANT)
    mb = cv2.filter2D(m, -1, k, borderType=cv2.BORDER_CONSTANT)
    roi[:] = roi * (1.0 - mb)[..., None] + smear


def post_process(img: np.ndarray, scene: dict, cam: Camera) -> np.ndarray:
    """Uneven light, exposure, blur, sensor noise; returns uint8 BGR before JPEG."""
    H, W = img.shape[:2]
    L, P = scene["light"], scene["post"]
    rng = np.random.default_rng(scene["texture_seed"] + 1)
    yy, xx = np.mgrid[0:32, 0:32].astype(np.float32) / 31.0
    a = math.radians(L["gradient_angle_deg"])
    g = 1 + L["gradient"] * ((xx - 0.5) * math.cos(a) + (yy - 0.5) * math.sin(a))
    sx, sy = L["spot_xy"]
    g += L["spot"] * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / 0.08)
    g *= L["exposure"]
    vig = L.get("vignette", 0.0)
    if vig:
        g *= 1 - vig * (((xx - 0.5) ** 2 + (yy - 0.5) ** 2) * 2)
    gain = cv2.resize(g.astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
    wb = P.get("white_balance", [1.0, 1.0, 1.0])
    img = cv2.multiply(
        img,
        cv2.merge([gain * np.float32(wb[0]), gain * np.float32(wb[1]), gain * np.float32(wb[2])]),
    )
    if P["motion_blur_px"] > 0:
        n = int(round(P["motion_blur_px"])) | 1
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1.0
        rot = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), P["motion_angle_deg"], 1.0)
        k = cv2.warpAffine(k, rot, (n, n))
        img = cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))
    if P["defocus_sigma"] > 0:
        img = cv2.GaussianBlur(img, (0, 0), P["defocus_sigma"])
    out = cv2.convertScaleAbs(img)
    if P["noise_sigma"] > 0:
        sigma = np.float32(P["noise_sigma"])
        luma = white_noise(rng, H, W)[..., None] * (sigma * 0.6)
        chroma = np.dstack([white_noise(rng, H, W) for _ in range(3)]) * (sigma * 0.8)
        out = cv2.add(out.astype(np.int16), (luma + chroma).astype(np.int16), dtype=cv2.CV_16S)
        out = np.clip(out, 0, 255).astype(np.uint8)
    return out
