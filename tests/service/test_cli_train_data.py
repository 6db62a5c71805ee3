"""The checks of ``dicecam train --data`` folders on their own (``check_data``): what they take
and what they refuse, before any training starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import UsageError
from service.cli._train_data import ONE_FACE_FROM, check_data

from dicecam_testing.folders import yolo_folder


def _dice(folder: Path, classes: list[int], prefix: str = "p") -> Path:
    """A YOLO folder of one photo per die, each labelled with its class."""
    for i, k in enumerate(classes):
        label = yolo_folder(folder, [f"{prefix}{i}"]) / "labels" / f"{prefix}{i}.txt"
        label.write_text(f"{k} 0.5 0.5 0.1 0.1\n")
    return folder


def test_dice_of_one_face_are_counted_over_every_folder_without_the_cocked_ones(tmp_path):
    half = ONE_FACE_FROM // 2
    a, b = _dice(tmp_path / "a", [0] * half), _dice(tmp_path / "b", [0] * half)
    with pytest.raises(UsageError, match=f"got all {ONE_FACE_FROM} labelled 1"):
        check_data([a, b])  # neither folder alone has enough to tell
    check_data([a])
    _dice(a, [6], prefix="cocked")  # a cocked die shows no face: still all 1s
    with pytest.raises(UsageError, match=f"got all {ONE_FACE_FROM} labelled 1"):
        check_data([a, b])
    check_data([_dice(tmp_path / "few", [2] * (ONE_FACE_FROM - 1))])  # too few to tell


def test_photos_training_reads_are_taken_whatever_the_case_of_their_suffix(tmp_path):
    data = _dice(tmp_path / "d", [0, 1])
    (data / "images" / "p0.jpg").rename(data / "images" / "p0.JPG")
    (data / "preview.heic").write_bytes(b"not in images/: not a training photo")
    check_data([data])
    (data / "images" / "p1.jpg").rename(data / "images" / "p1.HEIC")
    with pytest.raises(UsageError, match="p1.HEIC: training reads JPEG, PNG"):
        check_data([data])


@pytest.mark.parametrize(
    "names",
    [
        "['1', '2', '3', '4', '5', '6', 'Cocked']",
        "{0: ' 1 ', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6', 6: 'COCKED die'}",
        "{one: '1', two: '2'}",  # keys that are not numbers: training itself stops on them
    ],
)
def test_class_names_as_training_reads_them_are_taken(tmp_path, names):
    data = _dice(tmp_path / "d", [0, 1, 6])
    (data / "data.yaml").write_text(f"names: {names}\n")
    check_data([data])


def test_a_data_yaml_calling_the_cocked_class_a_face_is_refused(tmp_path):
    data = _dice(tmp_path / "d", [0, 1])
    (data / "data.yaml").write_text("names: ['1', '2', '3', '4', '5', '6', '7']\n")
    with pytest.raises(UsageError, match="got 6: '7'"):
        check_data([data])
