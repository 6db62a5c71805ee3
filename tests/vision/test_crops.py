"""Die crops for the face classifier are cut from YOLO folders as `dicecam eval` reads them."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.train.crops import iter_yolo_items, load_crops
from vision.yolo_dataset import DatasetError


def _photo(root: Path, name: str, labels: str) -> None:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    image = np.full((100, 200, 3), 40, np.uint8)
    cv2.rectangle(image, (20, 20), (60, 60), (255, 255, 255), -1)
    cv2.imwrite(str(root / "images" / f"{name}.png"), image)
    (root / "labels" / f"{name}.txt").write_text(labels)


def test_boxes_and_polygons_give_one_crop_each_with_their_class(tmp_path):
    # a box (face 3) and a polygon (face 6, the same square as four corners)
    _photo(tmp_path, "a", "2 0.2 0.4 0.2 0.4\n5 0.1 0.2 0.3 0.2 0.3 0.6 0.1 0.6\n")
    crops, classes = load_crops([tmp_path / "images"], jitter=0, size=32)
    assert crops.shape == (2, 32, 32, 3)
    assert classes.tolist() == [2, 5]
    # both are the same white square: the polygon was read as its bounding box
    assert np.abs(crops[0].astype(int) - crops[1].astype(int)).mean() < 1


def test_a_class_outside_the_faces_and_cocked_is_an_error_naming_the_file(tmp_path):
    _photo(tmp_path, "bad", "9 0.2 0.4 0.2 0.4\n")
    with pytest.raises(DatasetError, match=r"bad.txt: expected classes 0-6.*got class 9"):
        load_crops([tmp_path / "images"], jitter=0)


def test_a_line_that_is_not_a_label_is_an_error_with_its_line_number(tmp_path):
    _photo(tmp_path, "short", "2 0.2 0.4 0.2 0.4\n1 0.5 0.5\n")
    with pytest.raises(DatasetError, match=r"short.txt:2: expected 'class cx cy w h'"):
        load_crops([tmp_path / "images"], jitter=0)


def test_photos_without_a_label_file_are_passed_over(tmp_path):
    _photo(tmp_path, "a", "0 0.2 0.4 0.2 0.4\n")
    cv2.imwrite(str(tmp_path / "images" / "b.png"), np.zeros((10, 10, 3), np.uint8))
    assert [p.name for p, _ in iter_yolo_items([tmp_path / "images"])] == ["a.png"]
    crops, classes = load_crops([tmp_path / "images"], jitter=2, size=24)
    assert len(crops) == 3 and classes.tolist() == [0, 0, 0]
