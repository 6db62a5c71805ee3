"""What the real tools' readers require of our files, and what their exports look like.

Each test encodes a structure a third-party reader required when our output was checked against
it (datumaro 1.13.12, CVAT's datumaro fork, label-studio-sdk 2.1.2, pycocotools 2.0.11), so these
run without those packages installed.
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    detect_format,
    read_coco,
    read_labels,
    read_labelstudio,
    write_coco,
    write_labelstudio,
    write_yolo,
)
from vision.types import Die

DICE = {
    "a/one.jpg": ((640, 480), [Die(1, (10, 20, 60, 70), 0.9), Die(6, (300, 200, 350, 250), 0.4)]),
    "two.png": ((333, 257), [Die(4, (1, 2, 40, 44), 0.5, on_table=False, cocked=True)]),
    "name with space.jpg": ((320, 240), []),
}


@pytest.fixture
def photos(tmp_path: Path) -> list[LabelledPhoto]:
    made = []
    for name, ((w, h), dice) in DICE.items():
        path = tmp_path / "photos" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (w, h), (30, 120, 40)).save(path)
        made.append(LabelledPhoto(name, w, h, list(dice), path))
    return made


# ------------------------------------------------------------------------------ Label Studio


def _export(tasks: list[dict]) -> list[dict]:
    """A Label Studio JSON export of a project made from ``tasks``: its export serializer gives
    ``predictions`` (and ``drafts``) as ids; the first task was reviewed (its first box moved and
    relabelled, its off-table choice removed), the others not."""
    exported = []
    for n, task in enumerate(tasks, 1):
        prediction = task["predictions"][0]
        item = {
            "id": 100 + n,
            "data": task["data"],
            "annotations": [],
            "predictions": [500 + n],
            "drafts": [],
            "total_annotations": 0,
            "project": 7,
        }
        if n == 1:
            result = [r for r in copy.deepcopy(prediction["result"]) if r["type"] != "choices"]
            for r in result:
                del r["score"]
                r["id"] = "Xk9" + r["id"]  # Label Studio's own ids are random strings
            result[0]["value"]["x"] += 1.0  # 6.4 px to the right
            result[0]["value"]["rectanglelabels"] = ["2"]
            result[0]["origin"] = "prediction-changed"
            item["annotations"] = [
                {
                    "id": 901,
                    "completed_by": 1,
                    "result": result,
                    "was_cancelled": False,
                    "created_at": "2026-11-21T09:00:00.123456Z",
                    "updated_at": "2026-11-21T09:01:00.123456Z",
                    "prediction": {**prediction, "id": 501, "task": 101},
                    "parent_prediction": 501,
                }
            ]
        exported.append(item)
    return exported


def test_a_labelstudio_export_with_prediction_ids_imports_the_reviewed_tasks(photos, tmp_path):
    tasks = json.loads(write_labelstudio(photos, tmp_path / "ls").read_text())
    export = tmp_path / "project-7-at-2026-11-21.json"
    export.write_text(json.dumps(_export(tasks)))
    assert detect_format(export) == "labelstudio"

    got = read_labelstudio(export, image_root=tmp_path / "photos")

    # the unreviewed tasks carry no boxes (only prediction ids): left out, not read as no dice
    assert [p.name for p in got] == ["a/one.jpg"]
    assert got[0].image == tmp_path / "photos/a/one.jpg"
    moved, second = got[0].dice
    assert moved.value == 2 and moved.box == pytest.approx((16.4, 20, 66.4, 70))
    assert second.value == 6 and second.on_table  # the reviewer's correction, not the prediction


def test_labelstudio_json_min_export_is_refused_naming_the_export_to_use(tmp_path):
    # the shape label-studio-sdk's Converter writes for JSON_MIN: per-region choices are merged
    # into one "state" per task, so which die is off the table is lost
    json_min = [
        {
            "image": "/data/local-files/?d=a/one.jpg",
            "id": 101,
            "label": [
                {
                    "x": 2.6,
                    "y": 4.2,
                    "width": 7.8,
                    "height": 10.5,
                    "rotation": 0,
                    "rectanglelabels": ["2"],
                    "original_width": 640,
                    "original_height": 480,
                }
            ],
            "state": "off table",
            "annotator": "1",
            "annotation_id": 901,
            "created_at": "2026-11-21T09:00:00.123456Z",
            "updated_at": "2026-11-21T09:01:00.123456Z",
            "lead_time": 12.5,
        },
        {"image": "/data/local-files/?d=two.png", "id": 102, "annotator": "1"},
    ]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(json_min))
    with pytest.raises(LabelFormatError, match="JSON-MIN export.*export the project as JSON"):
        read_labels(path)


def test_labelstudio_csv_export_is_refused_naming_the_export_to_use(tmp_path):
    path = tmp_path / "result.csv"
    path.write_text('"annotation_id","annotator","id","image","label"\n901,"1",101,"x.jpg","[]"\n')
    with pytest.raises(LabelFormatError, match="CSV/TSV export.*export the project as JSON"):
        read_labels(path)


# ------------------------------------------------------------------------------------ YOLO

# CVAT's datumaro fork (YoloUltralyticsDetectionExtractor) reads every data.yaml key but these
# as a subset whose value names its photos; an `nc: 7` made CVAT's import fail with
# "TypeError: 'int' object is not iterable" (cvat-ai/cvat#8958).
CVAT_RESERVED = {"backup", "classes", "names", "path", "kpt_shape", "flip_idx"}


def test_data_yaml_has_only_keys_cvat_and_ultralytics_both_read(photos, tmp_path):
    data_yaml = write_yolo(photos, tmp_path / "yolo")
    data = yaml.safe_load(data_yaml.read_text())
    subsets = {k: v for k, v in data.items() if k not in CVAT_RESERVED}
    assert set(subsets) == {"train", "val"}  # ultralytics requires both
    assert (tmp_path / "yolo" / subsets["train"]).is_dir()
    assert subsets["val"] == []  # CVAT reads an empty subset; a folder would be read as one


def test_cvat_yolo_folder_holds_what_datumaro_needs_to_import_it(photos, tmp_path):
    # datumaro's "yolo" import of OUT picks cvat-yolo-1.1/obj.data (its strict YOLO importer is
    # tried first and searches subfolders), then needs each photo listed in train.txt, or its
    # size in images.meta; without either it failed: "Can't find image info for ..."
    for images in ("copy", "none"):
        out = tmp_path / images
        write_yolo(photos, out, images=images)
        cvat = out / "cvat-yolo-1.1"
        lines = (cvat / "obj.data").read_text().splitlines()
        config = {k.strip(): v.strip() for k, v in (line.split("=", 1) for line in lines)}
        listed = (cvat / config["train"].removeprefix("data/")).read_text().splitlines()
        assert len(listed) == len(photos)
        meta = {}
        for line in (cvat / "images.meta").read_text().splitlines():
            stem, height, width = shlex.split(line)
            meta[stem] = (int(width), int(height))
        for rel, photo in zip(listed, photos, strict=True):
            image = cvat / rel.removeprefix("data/")
            assert image.with_suffix(".txt").is_file(), rel
            assert meta[image.stem] == (photo.width, photo.height)
            if images == "copy":  # linked to the copy in images/train, not copied twice
                assert image.is_file(), rel
                assert image.stat().st_ino == (out / "images/train" / image.name).stat().st_ino


# ------------------------------------------------------------------------------------ COCO


def test_coco_export_of_cvat_or_datumaro_finds_photos_in_images_subset(photos, tmp_path):
    # datumaro 1.13's coco_instances export (as CVAT's "COCO 1.0" with images) puts the photos
    # in images/<subset>/ beside annotations/instances_<subset>.json
    out = tmp_path / "coco"
    write_coco(photos, out)
    (out / "images/default").mkdir()
    for image in sorted((out / "images").glob("*.*")):
        shutil.move(image, out / "images/default" / image.name)

    got = read_coco(out / "annotations/instances_default.json")

    assert [p.image for p in got] == [out / "images/default" / p.name for p in got]
    assert all(p.image.is_file() for p in got)
    assert [len(p.dice) for p in got] == [2, 1, 0]
