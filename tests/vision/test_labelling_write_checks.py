"""The writers check every die before they write anything: a die value that no format can
carry is refused naming the photo and the value, and leaves no half-written folder behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import LabelledPhoto, write_coco, write_labelstudio, write_yolo
from vision.types import Die

WRITERS = {"yolo": write_yolo, "coco": write_coco, "labelstudio": write_labelstudio}


def _photos(folder: Path, bad: Die) -> list[LabelledPhoto]:
    """A good photo first (so a writer going photo by photo starts writing), then a bad one."""
    folder.mkdir(parents=True, exist_ok=True)
    photos = []
    for name, dice in (("good.jpg", [Die(3, (1, 2, 20, 30), 0.9)]), ("bad.jpg", [bad])):
        Image.new("RGB", (60, 40)).save(folder / name)
        photos.append(LabelledPhoto(name, 60, 40, dice, folder / name))
    return photos


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("value", [7, -1, 0])
@pytest.mark.parametrize("images", ["copy", "link", "none"])
def test_a_bad_die_value_is_refused_before_anything_is_written(tmp_path, fmt, value, images):
    photos = _photos(tmp_path / "photos", Die(value, (30, 2, 50, 30), 0.9))
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=rf"bad\.jpg.*1\.\.6.*, got {value}$"):
        WRITERS[fmt](photos, out, images=images)
    assert not out.exists()


@pytest.mark.parametrize("cocked_class", [False, True])
def test_yolo_refuses_a_die_of_value_7_not_cocked_instead_of_writing_class_6(
    tmp_path, cocked_class
):
    """Class 6 is 'cocked' with cocked_class and no class at all without: a 7 is neither."""
    photos = _photos(tmp_path / "photos", Die(7, (30, 2, 50, 30), 0.9))
    with pytest.raises(
        ValueError, match=r"bad\.jpg: die value must be 1\.\.6 to write YOLO, got 7"
    ):
        write_yolo(photos, tmp_path / "out", images="none", cocked_class=cocked_class)
    assert not (tmp_path / "out").exists()


def test_yolo_writes_a_cocked_die_as_class_6_with_cocked_class_whatever_its_face(tmp_path):
    photos = _photos(tmp_path / "photos", Die(0, (30, 2, 50, 30), 0.9, cocked=True))
    photos[0].dice.append(Die(5, (1, 2, 20, 30), 0.9, cocked=True))
    data = write_yolo(photos, tmp_path / "out", images="none", cocked_class=True)
    labels = data.parent / "labels" / "train"
    classes = [line.split()[0] for n in ("good", "bad") for line in (labels / f"{n}.txt").open()]
    assert classes == ["2", "6", "6"]
