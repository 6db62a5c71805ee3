"""Benchmark: reading a 640x480 clip of rolls (vision.video), not run by default.

    python tests/benchmarks/bench_video.py                  # a 20 s clip at 30 fps, MJPG and mp4v
    python tests/benchmarks/bench_video.py --seconds 60 --every-ms 200

Writes a clip of the committed sample photos (each roll: the dice sliding in for 0.4 s, at rest
for 1.6 s) with OpenCV, then prints, for each format, the frames per second of the clip that are
decoded (every frame), decoded at a frame every ``--every-ms`` (the others grabbed, not converted),
and gone through by :func:`vision.settled_rolls` with the shipped reader (the frames of the clip
covered per second of wall time, the frames read per second, and how many times real time that
is), with the rolls it found.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from vision import DiceReader, settled_rolls, video_frames  # noqa: E402

SAMPLES = sorted((REPO / "datasets" / "samples").glob("*.jpg"))


def write_clip(path: Path, seconds: float, fps: int, fourcc: str) -> int:
    """A clip of rolls, one sample photo after another; its frame count."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (640, 480))
    if not writer.isOpened():
        raise SystemExit(f"this OpenCV build writes no {fourcc} video")
    frames = int(seconds * fps)
    slide, rest = int(0.4 * fps), int(1.6 * fps)
    n = 0
    for k in range(frames // (slide + rest) + 1):
        photo = cv2.resize(cv2.imread(str(SAMPLES[k % len(SAMPLES)])), (640, 480))
        for i in range(slide + rest):
            if n == frames:
                break
            dx = max(0, slide - i) * 12  # sliding in from the left, then still
            writer.write(np.roll(photo, dx, axis=1))
            n += 1
    writer.release()
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--every-ms", type=float, default=100.0)
    args = ap.parse_args()
    every_s = args.every_ms / 1000
    reader = DiceReader()
    print(f"{platform.processor() or platform.machine()}, OpenCV {cv2.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for fourcc, suffix in (("MJPG", ".avi"), ("mp4v", ".mp4")):
            clip = Path(tmp) / f"clip{suffix}"
            total = write_clip(clip, args.seconds, args.fps, fourcc)
            t0 = time.perf_counter()
            decoded = sum(1 for _ in video_frames(clip))
            every = time.perf_counter() - t0
            t0 = time.perf_counter()
            sampled = sum(1 for _ in video_frames(clip, every_s=every_s))
            sampling = time.perf_counter() - t0
            t0 = time.perf_counter()
            rolls = list(settled_rolls(reader, clip, every_s=every_s))
            reading = time.perf_counter() - t0
            print(
                f"{fourcc} {suffix}: {total} frames 640x480 at {args.fps} fps "
                f"({total / args.fps:.1f} s)\n"
                f"  decode every frame:        {decoded / every:8.1f} frames/s\n"
                f"  decode every {args.every_ms:g} ms:       {total / sampling:8.1f} clip frames/s "
                f"({sampled} decoded)\n"
                f"  settled_rolls (reader):    {total / reading:8.1f} clip frames/s, "
                f"{sampled / reading:.1f} frames read/s, "
                f"{total / args.fps / reading:.2f}x real time; {len(rolls)} rolls at "
                + ", ".join(f"{r.time_s:.1f} s" for r in rolls)
            )


if __name__ == "__main__":
    main()
