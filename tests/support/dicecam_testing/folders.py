"""Small labelled folders on disk for the tests."""

from __future__ import annotations

from pathlib import Path


def yolo_folder(root: Path, names: list[str]) -> Path:
    """A YOLO folder under ``root``: ``images/NAME.jpg`` (not a real JPEG) and a label file of one
    die (class 0, centred) for each name."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / "images" / f"{name}.jpg").write_bytes(b"jpeg")
        (root / "labels" / f"{name}.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    return root
