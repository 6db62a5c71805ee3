"""Videos written for the tests with OpenCV's own writer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest

__all__ = ["write_clip"]


def write_clip(
    path: Path, frames: Sequence[np.ndarray], *, fps: float = 10, fourcc: str = "MJPG"
) -> Path:
    """``frames`` (BGR, one size) as a video at ``path``; the test skips, saying why, where this
    OpenCV build writes no ``fourcc`` video."""
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (w, h))
    if not writer.isOpened():
        pytest.skip(f"this OpenCV build writes no {fourcc} video")
    for frame in frames:
        writer.write(frame)
    writer.release()
    return path
