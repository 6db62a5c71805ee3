"""Flat clutter on the table: playing cards, coins, score sheets (distractors, not labelled)."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from .render import Canvas

__all__ = ["draw_props", "sample_props"]

PROP_KINDS = ("card", "coin", "sheet")


def sample_props(
    rng: np.random.Generator, table: tuple[float, float], near: tuple[float, float]
) -> list[dict[str, Any]]:
    """0 to 4 props lying on the table, mostly around the playing area (half extents ``near``)."""
    count = int(rng.choice([0, 1, 2, 3, 4], p=[0.45, 0.25, 0.15, 0.1, 0.05]))
    props = []
    for _ in range(count):
        kind = str(rng.choice(PROP_KINDS, p=[0.4, 0.35, 0.25]))
        x = float(np.clip(rng.uniform(-near[0] - 6, near[0] + 6), -table[0] + 3, table[0] - 3))
        y = float(np.clip(rng.uniform(-near[1] - 6, near[1] + 6), -table[1] + 3, table[1] - 3))
        props.append(
            {
                "kind": kind,
                "xy": [x, y],
                "angle_deg": float(rng.uniform(0, 180)),
                "color": [float(v) for v in rng.uniform(20, 235, 3)],
                "seed": int(rng.integers(2**31)),
            }
        )
    return props


def _card_texture(rng: np.random.Generator, color) -> np.ndarray:
    tex = np.full((176, 128, 3), 240, np.uint8)
    if rng.random() < 0.5:  # back
        cv2.rectangle(tex, (8, 8), (119, 167), tuple(int(v) for v in color), -1)
        for k in range(0, 300, 12):
            cv2.line(tex, (k - 176, 176), (k, 0), (235, 235, 235), 2, cv2.LINE_AA)
    else:  # face: corner index and a big suit-like mark
        ink = (30, 30, 200) if rng.random() < 0.5 else (25, 25, 25)
        cv2.putText(
            tex,
            str(rng.choice(list("A23456789JQK"))),
            (10, 34),
            cv2.FONT_HERSHEY_SIMPLEX,
            1.0,
            ink,
            2,
            cv2.LINE_AA,
        )
        if rng.random() < 0.5:
            cv2.circle(tex, (64, 92), 26, ink, -1, cv2.LINE_AA)
        else:
            pts = np.array([[64, 58], [94, 92], [64, 126], [34, 92]], np.int32)
            cv2.fillPoly(tex, [pts], ink, cv2.LINE_AA)
    return tex.astype(np.float32)


def _sheet_texture(rng: np.random.Generator) -> np.ndarray:
    tex = np.full((220, 160, 3), 245, np.uint8)
    line = (200, 160, 130)
    for y in range(30, 220, 16):
        cv2.line(tex, (0, y), (160, y), line, 1, cv2.LINE_AA)
    for y in range(44, 210, 16):
        if rng.random() < 0.7:
            text = str(int(rng.integers(0, 3000)))
            cv2.putText(
                tex,
                text,
                (int(rng.integers(8, 70)), y),
                cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
                0.5,
                (120, 60, 30),
                1,
                cv2.LINE_AA,
            )
    return tex.astype(np.float32) + rng.normal(0, 2, (1, 1, 3)).astype(np.float32)


def draw_props(canvas: Canvas, props: list[dict[str, Any]]) -> None:
    """Draw props flat on the table top (z slightly above 0)."""
    for prop in props:
        rng = np.random.default_rng(prop["seed"])
        x, y = prop["xy"]
        a = math.radians(prop["angle_deg"])
        u = np.array([math.cos(a), math.sin(a), 0.0])
        v = np.array([math.sin(a), -math.cos(a), 0.0])  # u x v = -z: text reads from above
        c = np.array([x, y, 0.004])
        if prop["kind"] == "coin":
            r = float(rng.uniform(0.9, 1.6))
            ring = [
                c + r * (math.cos(t) * u + math.sin(t) * v)
                for t in np.linspace(0, 2 * math.pi, 28, endpoint=False)
            ]
            metal = np.array(
                rng.choice([[60, 160, 200], [180, 180, 180], [70, 110, 170]]), np.float32
            )
            canvas.flat(np.array(ring), metal * 0.75)
            canvas.flat(c + (np.array(ring) - c) * 0.82, metal)
            continue
        if prop["kind"] == "card":
            tex, w, h = _card_texture(rng, prop["color"]), 4.0, 5.5
        else:
            tex, w, h = _sheet_texture(rng), 9.0, 12.4
        corner = c - u * w / 2 - v * h / 2
        quad = np.array([corner, corner + u * w, corner + u * w + v * h, corner + v * h])
        canvas.plane(quad, tex, corner, u, v, tex.shape[1] / w)
