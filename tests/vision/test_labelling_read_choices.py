"""Which label an import takes, edges mutation testing found untested: the Label Studio
annotation saved last (by its updated_at; the later one in the export on a tie), a region
rotated about its corner, a COCO annotation without a score, a COCO folder with its JSON at the
top."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import (
    LabelledPhoto,
    read_coco,
    read_labelstudio,
    write_coco,
    write_labelstudio,
)
from vision.types import Die


def _photo(folder: Path) -> LabelledPhoto:
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (200, 100)).save(folder / "a.jpg")
    return LabelledPhoto("a.jpg", 200, 100, [Die(5, (20, 10, 60, 50), 0.9)], folder / "a.jpg")


def _task_with(tmp_path: Path, annotations: list[tuple[str, dict]]) -> Path:
    """Our task of one die, with human annotations: (face, times) each, in that order."""
    path = write_labelstudio([_photo(tmp_path)], tmp_path)
    (task,) = json.loads(path.read_text())
    region = task["predictions"][0]["result"][0]
    task["annotations"] = [
        {"result": [{**region, "value": {**region["value"], "rectanglelabels": [face]}}], **when}
        for face, when in annotations
    ]
    path.write_text(json.dumps([task]))
    return path


def test_the_label_studio_annotation_updated_last_wins_not_the_one_created_last(tmp_path):
    path = _task_with(
        tmp_path,
        [
            ("2", {"created_at": "2025-05-01T10:00:00Z", "updated_at": "2025-05-01T12:00:00Z"}),
            ("3", {"created_at": "2025-05-01T11:00:00Z", "updated_at": "2025-05-01T11:00:00Z"}),
        ],
    )
    assert [d.value for d in read_labelstudio(path)[0].dice] == [2]


def test_of_label_studio_annotations_saved_at_one_time_the_later_in_the_export_wins(tmp_path):
    same = {"updated_at": "2025-05-01T12:00:00+02:00"}
    path = _task_with(tmp_path, [("2", same), ("3", same), ("4", dict(same))])
    assert [d.value for d in read_labelstudio(path)[0].dice] == [4]


def test_a_label_studio_region_rotated_about_its_corner_gives_its_bounding_box(tmp_path):
    path = write_labelstudio([_photo(tmp_path)], tmp_path)
    (task,) = json.loads(path.read_text())
    value = task["predictions"][0]["result"][0]["value"]
    value.update(x=10.0, y=20.0, width=20.0, height=10.0, rotation=30)  # 40 x 10 px at (20, 20)
    path.write_text(json.dumps([task]))
    (die,) = read_labelstudio(path)[0].dice
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    xs = [20, 20 + 40 * c, 20 + 40 * c - 10 * s, 20 - 10 * s]
    ys = [20, 20 + 40 * s, 20 + 40 * s + 10 * c, 20 + 10 * c]
    assert die.box == pytest.approx((min(xs), min(ys), max(xs), max(ys)))


def test_a_coco_annotation_without_a_score_is_sure(tmp_path):
    path = write_coco([_photo(tmp_path / "images")], tmp_path, images="none")
    doc = json.loads(path.read_text())
    del doc["annotations"][0]["score"]
    path.write_text(json.dumps(doc))
    assert [d.confidence for d in read_coco(path)[0].dice] == [1.0]


def test_a_coco_folder_with_its_json_at_the_top_is_read(tmp_path):
    """Roboflow's COCO export: _annotations.coco.json beside the photos, no annotations/."""
    written = write_coco([_photo(tmp_path / "c")], tmp_path / "w", images="none")
    written.replace(tmp_path / "c" / "_annotations.coco.json")
    ((photo, image),) = [(p.name, p.image) for p in read_coco(tmp_path / "c")]
    assert (photo, image) == ("a.jpg", tmp_path / "c" / "a.jpg")
