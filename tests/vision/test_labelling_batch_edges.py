"""Edges of batch labelling that mutation testing found untested: which reader errors list a
photo as unreadable, the confidence and dice-count bounds, a training folder of missing photos."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import LabelledPhoto, label_photos, write_training_folder
from vision.types import Die, Reading


class ListReader:
    """A reader that gives each photo (by file name) what is listed: a Reading or an exception."""

    def __init__(self, results: dict[str, Reading | Exception]) -> None:
        self.results = results
        self.counts: list[int | None] = []

    def read(self, image: Path, expected_dice: int | None = None) -> Reading:
        self.counts.append(expected_dice)
        result = self.results[Path(image).name]
        if isinstance(result, Exception):
            raise result
        return result


def _folder(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "photos"
    root.mkdir()
    for name in names:
        Image.new("RGB", (64, 48)).save(root / name)
    return root


def test_a_reader_value_error_lists_the_photo_and_the_run_goes_on(tmp_path):
    root = _folder(tmp_path, "a.jpg", "b.jpg", "c.jpg")
    reader = ListReader(
        {
            "a.jpg": ValueError("cannot read a 1x1 image"),
            "b.jpg": Reading(64, 48, [Die(2, (1, 1, 9, 9), 0.9)]),
            "c.jpg": Reading(0, 48, []),  # a reader that gave no image
        }
    )
    run = label_photos(root, reader, show_progress=False)
    assert [p.name for p in run.photos] == ["b.jpg"]
    assert [(u.name, u.reason) for u in run.unreadable] == [
        ("a.jpg", "ValueError: cannot read a 1x1 image"),
        ("c.jpg", "reader returned an empty image"),
    ]


def test_conf_keeps_a_die_exactly_at_it(tmp_path):
    root = _folder(tmp_path, "a.jpg")
    dice = [Die(1, (1, 1, 9, 9), 0.5), Die(2, (11, 1, 19, 9), 0.4999)]
    reader = ListReader({"a.jpg": Reading(64, 48, dice)})
    run = label_photos(root, reader, conf=0.5, show_progress=False)
    assert [d.value for d in run.photos[0].dice] == [1]


def test_only_photos_read_short_of_the_count_are_listed_short(tmp_path):
    root = _folder(tmp_path, "full.jpg", "short.jpg")
    two = [Die(1, (1, 1, 9, 9), 0.9), Die(2, (11, 1, 19, 9), 0.9)]
    reader = ListReader({"full.jpg": Reading(64, 48, two), "short.jpg": Reading(64, 48, two[:1])})
    run = label_photos(root, reader, expected_dice=2, show_progress=False)
    assert reader.counts == [2, 2] and run.short == ["short.jpg"]
    assert run.summary()["short_of_count"] == ["short.jpg"]


def test_a_training_folder_of_a_photo_no_longer_there_names_it_and_writes_nothing(tmp_path):
    root = _folder(tmp_path, "a.jpg")
    die = [Die(1, (1, 1, 9, 9), 0.9)]
    photos = [
        LabelledPhoto("a.jpg", 64, 48, die, root / "a.jpg"),
        LabelledPhoto("gone.jpg", 64, 48, die, root / "gone.jpg"),  # moved since it was read
    ]
    with pytest.raises(FileNotFoundError, match=r"1 labelled photo\(s\) not found: gone.jpg"):
        write_training_folder(photos, tmp_path / "train")
    assert not (tmp_path / "train").exists()
