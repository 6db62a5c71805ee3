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


def first_photos(src: Path, dst: Path, n: int) -> Path:
    """The first ``n`` photos (by name) of the YOLO folder ``src`` with their label files, copied
    into ``dst``: a real set cut to what a test needs. A ``src`` that is not there leaves ``dst``
    absent too, as code that skips a missing set expects."""
    import shutil

    photos = sorted(p for p in (src / "images").glob("*") if p.is_file())[:n]
    if not photos:
        return dst
    (dst / "images").mkdir(parents=True)
    (dst / "labels").mkdir()
    for photo in photos:
        shutil.copyfile(photo, dst / "images" / photo.name)
        label = src / "labels" / f"{photo.stem}.txt"
        if label.is_file():
            shutil.copyfile(label, dst / "labels" / label.name)
    return dst
