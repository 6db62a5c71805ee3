"""vision.yolo_dataset at its edges: where a split's photos are (data.yaml keys, list files,
upper-case suffixes, ``path:``), which label file is a photo's, what a label line means
(classes by name, polygons, a BOM) and a photo's shown size."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from vision.yolo_dataset import (
    DatasetError,
    find_images,
    load_labels,
    shown_size,
    sibling_path,
)


def _photo(root: Path, rel: str, labels: str | None = None, size=(40, 20)) -> Path:
    image = root / rel
    image.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (90, 90, 90)).save(image)
    if labels is not None:
        label = sibling_path(image)
        label.parent.mkdir(parents=True, exist_ok=True)
        label.write_text(labels, encoding="utf-8")
    return image


def test_a_cocked_class_is_known_by_its_name_wherever_it_is_and_class_6_without_names(tmp_path):
    image = _photo(tmp_path, "images/a.png", "0 0.5 0.5 0.2 0.2\n6 0.2 0.2 0.2 0.2\n")
    names = {0: "Cocked", **{k: str(k) for k in range(1, 7)}}  # cocked first, faces 1-6 after
    assert [d.value for d in load_labels(image).truth(40, 20, names)] == [None, 6]
    assert [d.value for d in load_labels(image).truth(40, 20)] == [1, None]  # class 6: cocked


def test_the_val_split_is_found_under_any_of_its_names_in_a_data_yaml(tmp_path):
    _photo(tmp_path, "valid/images/a.png")
    (tmp_path / "data.yaml").write_text("train: train/images\nvalid: valid/images\n")
    assert [p.name for p in find_images(tmp_path, "val")[0]] == ["a.png"]


def test_a_data_yaml_path_is_the_base_of_its_splits_and_a_names_list_counts_from_0(tmp_path):
    _photo(tmp_path, "set/images/val/a.png")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "data.yaml").write_text(
        "path: ../set\nval: images/val\nnames: ['1', '2', '3', '4', '5', '6', cocked]\n"
    )
    images, names = find_images(tmp_path / "conf" / "data.yaml")
    assert [p.name for p in images] == ["a.png"]
    assert names == {0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "cocked"}


def test_a_list_file_names_photos_from_its_own_folder_and_upper_case_suffixes_count(
    tmp_path, monkeypatch
):
    _photo(tmp_path, "ds/images/A.JPG")
    _photo(tmp_path, "ds/images/sub/b.png")
    (tmp_path / "ds" / "val.txt").write_text("images/A.JPG\n\nimages/sub/b.png\n")
    (tmp_path / "ds" / "data.yaml").write_text("val: val.txt\n")
    monkeypatch.chdir(tmp_path)  # not the list's folder
    images, _ = find_images(tmp_path / "ds", "val")
    assert images == [tmp_path / "ds/images/A.JPG", tmp_path / "ds/images/sub/b.png"]
    assert all(p.is_file() for p in images)
    (tmp_path / "ds" / "data.yaml").write_text("val: images\n")  # a folder: upper case found
    assert [p.name for p in find_images(tmp_path / "ds", "val")[0]] == ["A.JPG", "b.png"]


def test_the_last_images_folder_in_the_path_is_the_one_labels_replaces(tmp_path):
    image = _photo(tmp_path, "images/set/images/val/a.png", "3 0.5 0.5 0.2 0.2\n")
    assert sibling_path(image) == tmp_path / "images/set/labels/val/a.txt"
    assert load_labels(image).labels == [(3, 0.5, 0.5, 0.2, 0.2)]


def test_a_polygon_is_its_bounding_box_and_an_odd_count_of_numbers_is_refused(tmp_path):
    image = _photo(tmp_path, "images/a.png", "1 0.1 0.1 0.5 0.1 0.1 0.3\n")  # a triangle
    cls, cx, cy, w, h = load_labels(image).labels[0]
    assert (cls, cx, cy, w, h) == pytest.approx((1, 0.3, 0.2, 0.4, 0.2))
    odd = _photo(tmp_path, "images/b.png", "1 0.1 0.1 0.5 0.1 0.1 0.3 0.2\n")
    with pytest.raises(DatasetError, match=r"b\.txt:1: expected 'class cx cy w h', got 8 fields"):
        load_labels(odd)


def test_a_label_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    image = _photo(tmp_path, "images/a.png")
    label = sibling_path(image)
    label.parent.mkdir(parents=True)
    label.write_bytes("\ufeff2 0.5 0.5 0.2 0.2\r\n".encode())  # Windows Notepad
    assert load_labels(image).labels == [(2, 0.5, 0.5, 0.2, 0.2)]


@pytest.mark.parametrize("orientation", [5, 6, 7, 8])
def test_a_photo_turned_by_exif_is_shown_tall(tmp_path, orientation):
    image = tmp_path / "a.jpg"
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.new("RGB", (40, 20)).save(image, exif=exif)
    assert shown_size(image) == (20, 40)
    Image.new("RGB", (40, 20)).save(image)
    assert shown_size(image) == (40, 20)
    image.write_bytes(b"not a photo")
    assert shown_size(image) is None


def test_classes_named_from_0_are_refused_not_read_as_two_classes_of_face_1(tmp_path):
    # names '0'-'5': class 0 fell back to its index (face 1) and class 1 went by its name '1'
    image = _photo(tmp_path, "images/a.png", "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.2 0.2\n")
    (tmp_path / "data.yaml").write_text("val: images\nnames: ['0', '1', '2', '3', '4', '5']\n")
    _, names = find_images(tmp_path / "data.yaml")
    with pytest.raises(
        DatasetError,
        match=r"a\.txt: die 1: expected class names '1' to '6' .*"
        r"got class 0 = '0'",
    ):
        load_labels(image).truth(40, 20, names)
    assert [d.value for d in load_labels(image).truth(40, 20, {0: "die", 1: "die"})] == [1, 2]


def test_a_class_name_of_a_digit_int_cannot_read_goes_by_the_class_index(tmp_path):
    # '²' is a digit to str.isdigit but no number to int(): its int() raised a ValueError
    image = _photo(tmp_path, "images/a.png", "2 0.5 0.5 0.2 0.2\n")
    assert [d.value for d in load_labels(image).truth(40, 20, {2: "²"})] == [3]
