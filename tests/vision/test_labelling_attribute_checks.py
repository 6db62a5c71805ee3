"""Yes/no attributes and per-region choices the importers cannot read are refused, naming the
file, the entry and what was expected: before, a COCO ``on_table: "maybe"`` (or 2, or a list)
was read as off the table, and a Label Studio choice it did not know was passed over, without a
word. Two Label Studio regions of one id in a task are refused: their choices are joined to
them by id, so which die is off the table could not be told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    read_coco,
    read_labelstudio,
    write_coco,
    write_labelstudio,
)
from vision.types import Die

DICE = [Die(3, (1, 2, 20, 30), 0.9), Die(4, (30, 2, 50, 30), 0.9, on_table=False, cocked=True)]


def _photo(folder: Path) -> LabelledPhoto:
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (60, 40)).save(folder / "a.jpg")
    return LabelledPhoto("a.jpg", 60, 40, list(DICE), folder / "a.jpg")


def _coco(tmp_path: Path, attributes: object) -> Path:
    path = write_coco([_photo(tmp_path / "images")], tmp_path, images="none")
    doc = json.loads(path.read_text())
    doc["annotations"][1]["attributes"] = attributes
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("value", ["maybe", 2, -1, ["yes"], None, "", 0.5])
@pytest.mark.parametrize("key", ["on_table", "cocked"])
def test_a_coco_attribute_neither_true_nor_false_is_refused_naming_it(tmp_path, key, value):
    path = _coco(tmp_path, {"on_table": True, "cocked": False, key: value})
    expected = (
        rf"{path}: annotation 2: expected attribute '{key}' to be true or false "
        rf"\(or 1/0, 'yes'/'no'\), got {value!r}".replace("[", r"\[").replace("]", r"\]")
    )
    with pytest.raises(LabelFormatError, match=expected):
        read_coco(path, image_root=tmp_path / "images")


@pytest.mark.parametrize(
    ("on_table", "cocked", "read"),
    [
        (False, True, (False, True)),
        (1, 0, (True, False)),
        (0, 1, (False, True)),
        (" FALSE ", "True", (False, True)),
        ("Yes", "no", (True, False)),
    ],
)
def test_coco_yes_no_attributes_read_as_they_say(tmp_path, on_table, cocked, read):
    path = _coco(tmp_path, {"on_table": on_table, "cocked": cocked})
    (photo,) = read_coco(path, image_root=tmp_path / "images")
    assert (photo.dice[1].on_table, photo.dice[1].cocked) == read


def test_coco_attributes_that_are_not_an_object_are_refused(tmp_path):
    path = _coco(tmp_path, ["on_table"])
    with pytest.raises(LabelFormatError, match=rf"{path}: annotation 2: expected 'attributes'"):
        read_coco(path, image_root=tmp_path / "images")


def _tasks(tmp_path: Path) -> tuple[Path, list[dict]]:
    path = write_labelstudio([_photo(tmp_path / "photos")], tmp_path / "ls")
    return path, json.loads(path.read_text())


def _save(path: Path, tasks: list[dict]) -> Path:
    path.write_text(json.dumps(tasks))
    return path


def test_label_studio_choices_are_read_onto_their_region(tmp_path):
    path, _ = _tasks(tmp_path)
    (photo,) = read_labelstudio(path, image_root=tmp_path / "photos")
    assert [(d.on_table, d.cocked) for d in photo.dice] == [(True, False), (False, True)]


@pytest.mark.parametrize("choices", [["Off table"], ["off table", "maybe"], "cocked", [1]])
def test_a_label_studio_choice_it_does_not_know_is_refused_naming_the_region(tmp_path, choices):
    path, tasks = _tasks(tmp_path)
    (state,) = [r for r in tasks[0]["predictions"][0]["result"] if r["type"] == "choices"]
    state["value"]["choices"] = choices
    with pytest.raises(LabelFormatError, match=rf"{_save(path, tasks)}: task 1: region die2: "):
        read_labelstudio(path, image_root=tmp_path / "photos")


def test_label_studio_choices_of_another_control_are_passed_over(tmp_path):
    """A project's own per-region <Choices> (say 'blur') say nothing of the table."""
    path, tasks = _tasks(tmp_path)
    result = tasks[0]["predictions"][0]["result"]
    result.append({**result[0], "from_name": "quality", "type": "choices"})
    result[-1]["value"] = {**result[0]["value"], "choices": ["blurry"]}
    (photo,) = read_labelstudio(_save(path, tasks), image_root=tmp_path / "photos")
    assert [(d.on_table, d.cocked) for d in photo.dice] == [(True, False), (False, True)]


def test_two_label_studio_regions_of_one_id_in_a_task_are_refused(tmp_path):
    path, tasks = _tasks(tmp_path)
    for r in tasks[0]["predictions"][0]["result"]:
        r["id"] = "die1"
    with pytest.raises(
        LabelFormatError,
        match=rf"{_save(path, tasks)}: task 1: region 2: expected each region id once, "
        r"got 'die1' again \(first in region 1\)",
    ):
        read_labelstudio(path, image_root=tmp_path / "photos")
