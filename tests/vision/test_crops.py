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


def test_a_crop_holds_its_die_in_the_middle_and_jittered_ones_stay_on_it(tmp_path):
    # the white square 20-60 x 20-60 of a 200 x 100 photo: x and y scale by its width and height
    _photo(tmp_path, "a", "2 0.2 0.4 0.2 0.4\n")
    crops, _ = load_crops([tmp_path / "images"], jitter=8, size=32, seed=1)
    assert len(crops) == 9
    first = crops[0].astype(int)
    assert first[8:24, 8:24].min() == 255  # the die fills the middle
    assert first[:2, :2].max() < 100  # the margin around it shows the table
    for crop in crops[1:]:  # a detector's errors are a few pixels, not a die's width
        assert crop[13:19, 13:19].min() == 255


def test_photo_count_suffix_case_and_boxes_too_small_to_read(tmp_path):
    for name in ("a", "b", "c"):
        _photo(tmp_path, name, "1 0.2 0.4 0.2 0.4\n")
    (tmp_path / "images" / "c.png").rename(tmp_path / "images" / "c.PNG")
    assert len(load_crops([tmp_path / "images"], jitter=0)[0]) == 3
    assert len(load_crops([tmp_path / "images"], jitter=0, max_images=2)[0]) == 2
    # a box under 3 px a side (2 x 4 px here) gives no crop; one of 4 px does
    _photo(tmp_path, "d", "3 0.5 0.5 0.01 0.04\n3 0.5 0.5 0.02 0.04\n")
    crops, classes = load_crops([tmp_path / "images"], jitter=0)
    assert classes.tolist() == [1, 1, 1, 3]


def test_the_cocked_class_is_the_last_and_an_unreadable_photo_is_passed_over(tmp_path):
    _photo(tmp_path, "a", "6 0.2 0.4 0.2 0.4\n")
    assert load_crops([tmp_path / "images"], jitter=0)[1].tolist() == [6]
    (tmp_path / "images" / "broken.png").write_bytes(b"not a png")
    (tmp_path / "labels" / "broken.txt").write_text("1 0.5 0.5 0.2 0.2\n")
    unreadable: list = []
    assert load_crops([tmp_path / "images"], jitter=0, unreadable=unreadable)[1].tolist() == [6]
    assert unreadable == [tmp_path / "images" / "broken.png"]  # for the caller to say
    _photo(tmp_path, "seven", "7 0.2 0.4 0.2 0.4\n")
    with pytest.raises(DatasetError, match=r"seven.txt: expected classes 0-6.*got class 7"):
        load_crops([tmp_path / "images"], jitter=0)


def test_a_washed_out_face_gives_no_crop_but_a_cocked_die_still_does(tmp_path):
    import json

    _photo(tmp_path, "a", "2 0.2 0.4 0.2 0.4\n6 0.6 0.4 0.2 0.4\n4 0.8 0.4 0.2 0.4\n")
    (tmp_path / "meta").mkdir()
    dice = [
        {"state": "table", "face_contrast": 1.0},  # washed out: no crop
        {"state": "cocked", "face_contrast": 1.0},  # leaning: told by its shape
        {"state": "table", "face_contrast": 200.0},
    ]
    (tmp_path / "meta" / "a.json").write_text(json.dumps({"dice": dice}))
    assert load_crops([tmp_path / "images"], jitter=0)[1].tolist() == [6, 4]


def test_no_dice_give_empty_arrays_of_the_crop_shape(tmp_path):
    _photo(tmp_path, "a", "")
    crops, classes = load_crops([tmp_path / "images"], size=24)
    assert (crops.shape, crops.dtype, classes.shape, classes.dtype) == (
        (0, 24, 24, 3),
        np.uint8,
        (0,),
        np.int64,
    )


def test_a_labelled_photo_that_is_not_there_is_said_so_among_those_not_readable(tmp_path):
    """A sidecar whose photo is missing (a synth set killed between the two) is named as no
    such file, not as a photo OpenCV could not read; a broken one stays plainly named."""
    from vision.train.crops import read_photo, say_unreadable

    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    missing = tmp_path / "missing.jpg"
    unreadable: list = []
    assert read_photo(broken, unreadable) is None and read_photo(missing, unreadable) is None
    lines: list[str] = []
    say_unreadable(unreadable, "faces", log=lines.append)
    assert lines == [
        f"faces: 2 labelled photos not readable, left out: {broken}, {missing} (no such file)"
    ]
