"""Edges of the three formats that mutation testing found untested: attribute words other tools
write, a single Label Studio task saved alone, YOLO labels another tool named by the photo's own
stem, a flat YOLO folder with its train.txt list, lines of six numbers, a die without a value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    detect_format,
    read_coco,
    read_labels,
    read_yolo,
    write_coco,
    write_labelstudio,
    write_yolo,
)
from vision.types import Die


def _photo(folder: Path, name: str = "a.jpg", size: tuple[int, int] = (60, 40)) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size).save(path)
    return path


def test_coco_attributes_written_as_words_are_read(tmp_path):
    image = _photo(tmp_path / "images")
    dice = [Die(3, (1, 2, 20, 30), 0.9), Die(4, (30, 2, 50, 30), 0.9)]
    path = write_coco([LabelledPhoto("a.jpg", 60, 40, dice, image)], tmp_path, images="none")
    doc = json.loads(path.read_text())
    doc["annotations"][0]["attributes"] = {"on_table": "no", "cocked": "yes"}
    doc["annotations"][1]["attributes"] = {"on_table": "1", "cocked": "0"}
    path.write_text(json.dumps(doc))
    got = [(d.on_table, d.cocked) for d in read_coco(path, image_root=tmp_path / "images")[0].dice]
    assert got == [(False, True), (True, False)]


def test_a_single_label_studio_task_saved_alone_is_known_and_read(tmp_path):
    image = _photo(tmp_path)
    photo = LabelledPhoto("a.jpg", 60, 40, [Die(5, (1, 2, 20, 30), 0.9)], image)
    (task,) = json.loads(write_labelstudio([photo], tmp_path / "ls").read_text())
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))  # one task, as a dict
    assert detect_format(path) == "labelstudio"
    assert [d.value for p in read_labels(path) for d in p.dice] == [5]


def test_yolo_labels_named_by_the_photos_own_stem_find_it_in_a_subfolder(tmp_path):
    """`dicecam label` names sub/x.jpg's labels sub__x.txt; CVAT and others name them x.txt."""
    photos = tmp_path / "photos"
    _photo(photos, "sub/x.jpg", (200, 100))
    labels = tmp_path / "y" / "labels"
    labels.mkdir(parents=True)
    (labels / "x.txt").write_text("2 0.5 0.5 0.1 0.2\n")
    (photo,) = read_labels(tmp_path / "y", "yolo", image_root=photos)
    assert (photo.name, photo.width, photo.height) == ("sub/x.jpg", 200, 100)
    assert photo.dice[0].value == 3 and photo.dice[0].box == pytest.approx((90, 40, 110, 60))


def test_a_flat_yolo_folder_passes_over_its_train_txt_list(tmp_path):
    _photo(tmp_path, "a.jpg")
    (tmp_path / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (tmp_path / "train.txt").write_text("a.jpg\n")  # the photo list, not labels
    assert [(p.name, len(p.dice)) for p in read_yolo(tmp_path)] == [("a.jpg", 1)]


def test_a_yolo_line_of_six_numbers_is_refused_naming_file_and_line(tmp_path):
    """ultralytics' predictions with save_conf write 'class cx cy w h conf': not labels."""
    data = write_yolo([LabelledPhoto("a.jpg", 60, 40, [], _photo(tmp_path))], tmp_path / "y")
    label = data.parent / "labels" / "train" / "a.txt"
    label.write_text("0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2 0.2 0.9\n")
    with pytest.raises(LabelFormatError, match=rf"{label}:2: expected 'class cx cy w h', got"):
        read_yolo(data.parent)


def test_yolo_refuses_a_die_without_a_value_that_is_not_cocked(tmp_path):
    photo = LabelledPhoto("a.jpg", 60, 40, [Die(0, (1, 2, 20, 30), 0.9)], _photo(tmp_path))
    with pytest.raises(ValueError, match="die value must be 1..6 to write YOLO, got 0"):
        write_yolo([photo], tmp_path / "y", images="none")


def test_coco_without_attributes_is_on_the_table_and_a_cocked_category_is_cocked(tmp_path):
    """Roboflow's COCO has no attributes; a die of category 'cocked' needs no attribute."""
    image = _photo(tmp_path / "images")
    dice = [Die(3, (1, 2, 20, 30), 0.9), Die(0, (30, 2, 50, 30), 0.9, cocked=True)]
    path = write_coco([LabelledPhoto("a.jpg", 60, 40, dice, image)], tmp_path, images="none")
    doc = json.loads(path.read_text())
    for ann in doc["annotations"]:
        del ann["attributes"]
    path.write_text(json.dumps(doc))
    got = [(d.value, d.on_table, d.cocked) for d in read_coco(path)[0].dice]
    assert got == [(3, True, False), (0, True, True)]


def test_a_coco_image_without_its_height_takes_the_size_of_the_photo_found(tmp_path):
    image = _photo(tmp_path / "images", size=(60, 40))
    dice = [Die(3, (1, 2, 20, 30), 0.9)]
    path = write_coco([LabelledPhoto("a.jpg", 60, 40, dice, image)], tmp_path, images="none")
    doc = json.loads(path.read_text())
    del doc["images"][0]["height"]
    path.write_text(json.dumps(doc))
    (photo,) = read_coco(path)
    assert (photo.width, photo.height, len(photo.dice)) == (60, 40, 1)


def test_a_local_files_photo_not_found_keeps_its_folders_in_its_name(tmp_path):
    """Label Studio's Local Files path is the photo's path in the labelled folder."""
    from vision.labelling.locate import PhotoFinder

    finder = PhotoFinder([tmp_path])
    assert finder.name("/data/local-files/?d=table/IMG_1.jpg", None) == "table/IMG_1.jpg"
    assert finder.name("/data/upload/1/3f2a9c1b-IMG_1.jpg", None) == "3f2a9c1b-IMG_1.jpg"


@pytest.mark.parametrize("name", ["A.JPG", "dice[1].jpg", "what?*.png"])
def test_yolo_labels_find_a_photo_of_an_upper_case_suffix_or_glob_characters(tmp_path, name):
    _photo(tmp_path, name, (200, 100))
    (tmp_path / f"{Path(name).stem}.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    assert [(p.name, p.width, len(p.dice)) for p in read_yolo(tmp_path)] == [(name, 200, 1)]


@pytest.mark.parametrize("listing", ["valid.txt", "val.txt", "test.txt"])
def test_a_flat_yolo_folder_passes_over_its_other_photo_lists(tmp_path, listing):
    _photo(tmp_path, "a.jpg")
    (tmp_path / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (tmp_path / listing).write_text("a.jpg\n")
    assert [(p.name, len(p.dice)) for p in read_yolo(tmp_path)] == [("a.jpg", 1)]
