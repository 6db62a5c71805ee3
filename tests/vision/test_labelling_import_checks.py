"""What a labelling tool could export that would lose dice without a word: a box wholly off its
photo (a training folder drops it once clipped), a photo listed twice, an image id or category
id used twice. Each import refuses it naming the file, the entry and what was expected; a box
only running past an edge is kept (writers clip it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    read_coco,
    read_labels,
    read_labelstudio,
    read_yolo,
    write_coco,
    write_labelstudio,
    write_training_folder,
    write_yolo,
)
from vision.types import Die


@pytest.fixture
def photos(tmp_path: Path) -> list[LabelledPhoto]:
    """Two 60x40 photos with a die each, in tmp_path/images."""
    (tmp_path / "images").mkdir()
    made = []
    for name, value, box in (("a.jpg", 3, (1, 2, 20, 30)), ("b.jpg", 5, (30, 5, 50, 35))):
        Image.new("RGB", (60, 40)).save(tmp_path / "images" / name)
        made.append(LabelledPhoto(name, 60, 40, [Die(value, box, 0.9)], tmp_path / "images" / name))
    return made


def _coco(photos: list[LabelledPhoto], tmp_path: Path) -> dict:
    return json.loads(write_coco(photos, tmp_path / "coco", images="none").read_text())


def _save(doc: object, path: Path) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_a_coco_box_wholly_off_its_photo_is_refused_one_past_an_edge_kept(photos, tmp_path):
    doc = _coco(photos, tmp_path)
    doc["annotations"][1]["bbox"] = [100, 100, 10, 10]  # b.jpg is 60x40
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError) as err:
        read_coco(path, image_root=tmp_path / "images")
    assert str(path) in str(err.value) and "annotation 2" in str(err.value)
    assert "expected a box on the 60x40 photo, got (100, 100, 110, 110)" in str(err.value)

    doc["annotations"][1]["bbox"] = [50, 30, 30, 30]  # past the right and bottom edges
    read = read_coco(_save(doc, path), image_root=tmp_path / "images")
    assert [d.box for d in read[1].dice] == [(50, 30, 80, 60)]
    data = write_training_folder(read, tmp_path / "train")
    line = (data.parent / "labels" / "train" / "b.txt").read_text().split()
    assert line[0] == "4" and [float(v) for v in line[1:]] == pytest.approx(
        [55 / 60, 35 / 40, 10 / 60, 10 / 40]
    )


def test_label_studio_percent_boxes_past_100_are_refused_naming_task_and_region(photos, tmp_path):
    tasks = json.loads(write_labelstudio(photos, tmp_path / "ls").read_text())
    value = tasks[0]["predictions"][0]["result"][0]["value"]
    value["x"], value["width"] = 150.0, 20.0
    path = _save(tasks, tmp_path / "t.json")
    with pytest.raises(LabelFormatError) as err:
        read_labelstudio(path, image_root=tmp_path / "images")
    assert f"{path}: task 1: region die1: expected a box on the 60x40 photo" in str(err.value)

    value["x"] = 95.0  # runs past the right edge: kept
    (die,) = read_labelstudio(_save(tasks, path), image_root=tmp_path / "images")[0].dice
    assert die.box == pytest.approx((57, 2, 69, 30))


def test_a_yolo_line_wholly_off_its_photo_is_refused_naming_file_and_line(photos, tmp_path):
    data = write_yolo(photos, tmp_path / "y")
    label = data.parent / "labels" / "train" / "a.txt"
    label.write_text("2 0.5 0.5 0.2 0.2\n2 1.5 0.5 0.2 0.2\n")
    with pytest.raises(LabelFormatError, match=rf"{label}:2: expected a box on the 60x40 photo"):
        read_yolo(data.parent)
    label.write_text("2 0.5 0.5 0.2 0.2\n2 0.95 0.5 0.2 0.2\n")  # past the edge: kept
    assert len(read_labels(data.parent)[0].dice) == 2


def test_a_coco_image_id_used_twice_is_refused_not_one_photo_lost(photos, tmp_path):
    """Two exports merged by hand: before, the second image took the first's place, a.jpg was
    gone and b.jpg held a.jpg's die too."""
    doc = _coco(photos, tmp_path)
    doc["images"][1]["id"] = doc["annotations"][1]["image_id"] = doc["images"][0]["id"]
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError) as err:
        read_coco(path, image_root=tmp_path / "images")
    assert f"{path}: image 2: expected each image id once, got id 1 again (first in image 1)" in (
        str(err.value)
    )


def test_a_photo_listed_twice_is_refused_not_split_in_two(photos, tmp_path):
    """Two COCO images of one file, or two Label Studio tasks of one photo (a tasks.json
    imported twice), were two photos of the same name, each with some of its dice."""
    doc = _coco(photos, tmp_path)
    doc["images"].append({**doc["images"][0], "id": 9})
    doc["annotations"].append({**doc["annotations"][0], "id": 9, "image_id": 9})
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError) as err:
        read_coco(path, image_root=tmp_path / "images")
    assert f"{path}: image 3: expected each photo once, got 'a.jpg' again (first in image 1)" in (
        str(err.value)
    )

    tasks = json.loads(write_labelstudio(photos, tmp_path / "ls").read_text())
    tasks.append({**tasks[0], "id": 7})
    path = _save(tasks, tmp_path / "t.json")
    with pytest.raises(LabelFormatError) as err:
        read_labelstudio(path, image_root=tmp_path / "images")
    assert f"{path}: task 7: expected each photo once, got 'a.jpg' again (first in task 1)" in (
        str(err.value)
    )
    tasks[-1] = {**tasks[0], "id": 7, "data": {**tasks[0]["data"], "image": "x/c.jpg"}}
    tasks[-1]["data"].pop("name")
    Image.new("RGB", (60, 40)).save(tmp_path / "images" / "c.jpg")  # another photo: fine
    assert len(read_labelstudio(_save(tasks, path), image_root=tmp_path / "images")) == 3


def test_a_coco_category_id_named_twice_is_refused(photos, tmp_path):
    doc = _coco(photos, tmp_path)
    doc["categories"].append({"id": 3, "name": "5", "supercategory": "die"})
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError, match=r"category 8: expected each category id once"):
        read_coco(path, image_root=tmp_path / "images")
    doc["categories"][-1]["name"] = "3"  # the same name again says nothing new: read
    assert [d.value for p in read_coco(_save(doc, path)) for d in p.dice] == [3, 5]


def test_an_annotation_of_an_image_not_listed_names_its_image_id(photos, tmp_path):
    doc = _coco(photos, tmp_path)
    doc["annotations"][1]["image_id"] = 5
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError) as err:
        read_coco(path, image_root=tmp_path / "images")
    assert str(err.value) == f"{path}: annotation 2: image_id 5 is not in 'images'"


def test_an_annotation_of_a_category_not_listed_names_its_category_id(photos, tmp_path):
    doc = _coco(photos, tmp_path)
    doc["annotations"][0]["category_id"] = 9
    path = _save(doc, tmp_path / "c.json")
    with pytest.raises(LabelFormatError) as err:
        read_coco(path, image_root=tmp_path / "images")
    assert str(err.value) == f"{path}: annotation 1: category_id 9 is not listed"
