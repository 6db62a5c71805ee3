"""Round trips through YOLO, COCO and Label Studio on real files, and importing corrections."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    detect_format,
    image_size,
    labelstudio_config,
    read_coco,
    read_labels,
    read_labelstudio,
    read_yolo,
    write_coco,
    write_labels,
    write_labelstudio,
    write_training_folder,
    write_yolo,
)
from vision.types import Die

# Odd sizes and fractional boxes, so that rounding or a swapped axis would show.
PHOTOS = {
    "a/one.jpg": (
        (640, 480),
        [
            Die(1, (10.25, 20.5, 60.75, 71.0), 0.91),
            Die(6, (300.4, 200.2, 351.9, 250.6), 0.42, on_table=False),
            Die(3, (600.0, 430.0, 639.5, 479.5), 0.77, cocked=True),
        ],
    ),
    "b/one.jpg": ((800, 600), [Die(2, (100.0, 100.0, 150.0, 150.0), 0.99)]),
    "two.png": (
        (333, 257),
        [
            Die(4, (1.3, 2.7, 40.1, 44.4), 0.55),
            Die(5, (200.6, 150.2, 260.0, 210.9), 0.66),
            Die(6, (100.0, 60.0, 130.3, 91.1), 0.88, on_table=False, cocked=True),
        ],
    ),
    "empty.jpg": ((320, 240), []),
}


def make_photos(root: Path) -> list[LabelledPhoto]:
    photos = []
    for name, ((w, h), dice) in PHOTOS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (w, h), (30, 120, 40)).save(path)
        photos.append(LabelledPhoto(name, w, h, [Die(*_fields(d)) for d in dice], path))
    return photos


def _fields(d: Die) -> tuple:
    return (d.value, d.box, d.confidence, d.on_table, d.cocked)


def assert_same(got: list[LabelledPhoto], want: list[LabelledPhoto], *, flags: bool, tol=0.5):
    assert len(got) == len(want)
    by_size = {}
    for p in got:
        by_size.setdefault((p.width, p.height, len(p.dice)), []).append(p)
    for w in want:
        g = by_size[(w.width, w.height, len(w.dice))].pop(0)
        for gd, wd in zip(g.dice, w.dice, strict=True):
            assert gd.value == wd.value
            for a, b in zip(gd.box, wd.box, strict=True):
                assert abs(a - b) <= tol, (g.name, gd.box, wd.box)
            if flags:
                assert (gd.on_table, gd.cocked) == (wd.on_table, wd.cocked), g.name


@pytest.fixture
def photos(tmp_path: Path) -> list[LabelledPhoto]:
    return make_photos(tmp_path / "photos")


def test_yolo_round_trip_keeps_every_box_and_value(photos, tmp_path):
    out = tmp_path / "yolo"
    data_yaml = write_yolo(photos, out)
    back = read_yolo(out)
    assert_same(back, photos, flags=False)
    # the same dice to a tenth of a pixel, not just 0.5
    assert_same(back, photos, flags=False, tol=0.01)
    data = yaml.safe_load(data_yaml.read_text())
    assert data["names"] == {0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6"}
    assert (out / data["train"]).is_dir() and "path" not in data
    lines = (out / "labels/train/a__one.txt").read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["0", "5", "2"]
    assert all(len(line.split()) == 5 for line in lines)
    assert (out / "labels/train/empty.txt").read_text() == ""
    listed = (out / "train.txt").read_text().split()
    assert sorted(listed) == sorted(f"images/train/{p.flat_name}" for p in photos)
    assert all((out / rel).is_file() for rel in listed)
    cvat = out / "cvat-yolo-1.1"
    assert (cvat / "obj.names").read_text().split() == ["1", "2", "3", "4", "5", "6"]
    assert "classes = 6" in (cvat / "obj.data").read_text()
    assert (cvat / "obj_train_data/two.txt").read_text() == (
        out / "labels/train/two.txt"
    ).read_text()
    # CVAT's own YOLO 1.1 layout reads back too, with the photos found elsewhere
    sizes = {Path(p.flat_name).stem: (p.width, p.height) for p in photos}
    assert_same(read_yolo(cvat, sizes=sizes), photos, flags=False)


def test_yolo_cocked_class(photos, tmp_path):
    write_yolo(photos, tmp_path / "y", cocked_class=True)
    names = yaml.safe_load((tmp_path / "y/data.yaml").read_text())["names"]
    assert names[6] == "cocked"
    back = {p.name: p for p in read_yolo(tmp_path / "y")}
    assert [d.cocked for d in back["two.png"].dice] == [False, False, True]
    assert back["two.png"].dice[2].value == 0  # the best-guess face is not kept in this mode
    assert [d.value for d in back["a__one.jpg"].dice] == [1, 6, 0]


def test_coco_round_trip_keeps_boxes_values_and_attributes(photos, tmp_path):
    path = write_coco(photos, tmp_path / "coco")
    data = json.loads(path.read_text())
    assert [(c["id"], c["name"]) for c in data["categories"]] == [
        *((i, str(i)) for i in range(1, 7)),
        (7, "cocked"),  # a cocked die read without a top face
    ]
    ann = data["annotations"][1]
    assert ann["category_id"] == 6 and ann["iscrowd"] == 0
    assert ann["attributes"] == {"occluded": False, "on_table": False, "cocked": False}
    x, y, w, h = ann["bbox"]
    assert (x, y) == (300.4, 200.2) and ann["area"] == pytest.approx(w * h, abs=0.01)
    back = read_coco(tmp_path / "coco")
    assert_same(back, photos, flags=True, tol=0.01)
    assert [d.confidence for d in back[0].dice] == [0.91, 0.42, 0.77]
    assert all(p.image is not None and p.image.is_file() for p in back)


def test_labelstudio_tasks_match_config_and_round_trip(photos, tmp_path):
    path = write_labelstudio(photos, tmp_path / "ls", model_version="test-model")
    tasks = json.loads(path.read_text())
    config = ET.fromstring((tmp_path / "ls/labeling-config.xml").read_text())
    assert config.tag == "View"
    image = config.find("Image")
    rect = config.find("RectangleLabels")
    choices = config.find("Choices")
    assert image.get("value") == "$image"
    labels = [lab.get("value") for lab in rect.findall("Label")]
    assert labels == ["1", "2", "3", "4", "5", "6", "cocked"]
    assert choices.get("perRegion") == "true"
    t0 = tasks[0]
    assert t0["data"]["image"] == "/data/local-files/?d=a/one.jpg"
    pred = t0["predictions"][0]
    assert pred["model_version"] == "test-model" and pred["score"] == 0.42
    rects = [r for r in pred["result"] if r["type"] == "rectanglelabels"]
    states = [r for r in pred["result"] if r["type"] == "choices"]
    assert [r["value"]["rectanglelabels"] for r in rects] == [["1"], ["6"], ["3"]]
    assert [r["score"] for r in rects] == [0.91, 0.42, 0.77]
    for r in pred["result"]:
        assert r["to_name"] == image.get("name")
        assert r["from_name"] in {rect.get("name"), choices.get("name")}
        assert (r["original_width"], r["original_height"]) == (640, 480)
        v = r["value"]
        assert 0 <= v["x"] <= 100 and 0 <= v["x"] + v["width"] <= 100
    assert rects[0]["value"]["x"] == pytest.approx(100 * 10.25 / 640)
    assert {s["id"]: s["value"]["choices"] for s in states} == {
        "die2": ["off table"],
        "die3": ["cocked"],
    }
    back = read_labelstudio(path, image_root=tmp_path / "photos")
    assert_same(back, photos, flags=True, tol=0.01)
    assert [p.name for p in back] == [p.name for p in photos]
    assert all(p.image == q.image for p, q in zip(back, photos, strict=True))


def test_labelstudio_export_with_human_correction_is_imported(photos, tmp_path):
    tasks = json.loads(write_labelstudio(photos, tmp_path / "ls").read_text())
    # What Label Studio exports after a person fixed photo a/one.jpg: the 6 was really a 5 and
    # its box was too small; the cocked 3 is deleted. An older cancelled annotation is ignored.
    result = [r for r in tasks[0]["predictions"][0]["result"] if r["id"] in {"die1", "die2"}]
    result = json.loads(json.dumps(result))
    for r in result:
        r.pop("score", None)
        r["origin"] = "manual"
        if r["id"] == "die2" and r["type"] == "rectanglelabels":
            r["value"]["rectanglelabels"] = ["5"]
            r["value"]["width"] = 100 * 60 / 640
    tasks[0]["annotations"] = [
        {"id": 7, "was_cancelled": True, "result": [], "updated_at": "2026-01-02T00:00:00Z"},
        {"id": 8, "was_cancelled": False, "result": result, "updated_at": "2026-01-01T10:00:00Z"},
    ]
    # photo two.png was uploaded through the browser: Label Studio renamed it
    tasks[2]["data"] = {"image": "/data/upload/3/1a2b3c4d-two.png"}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    assert detect_format(export) == "labelstudio"
    back = read_labels(export, image_root=tmp_path / "photos")
    fixed = back[0]
    assert [d.value for d in fixed.dice] == [1, 5]
    assert fixed.dice[1].box == pytest.approx((300.4, 200.2, 360.4, 250.6), abs=1e-6)
    assert not fixed.dice[1].on_table  # its choices region kept
    assert fixed.dice[1].confidence == 1.0  # a person's label
    assert back[2].image == tmp_path / "photos/two.png"
    assert [d.value for d in back[1].dice] == [2]  # not annotated: the prediction stands
    # ... and it becomes a training folder with the correction in it
    data_yaml = write_training_folder(back, tmp_path / "train")
    trained = {p.name: p for p in read_yolo(data_yaml.parent)}
    assert [d.value for d in trained["a__one.jpg"].dice] == [1, 5]
    assert (tmp_path / "train/images/train/a__one.jpg").stat().st_size > 0


def test_every_format_converts_into_every_other(photos, tmp_path):
    current, flags_kept = photos, True
    for n, fmt in enumerate(["coco", "labelstudio", "yolo", "coco"]):
        out = tmp_path / f"{n}-{fmt}"
        images = "copy" if fmt != "labelstudio" else "link"
        write_labels(current, out, fmt, images=images)
        assert detect_format(out) == fmt
        current = read_labels(out)
        flags_kept = flags_kept and fmt != "yolo"  # YOLO has no attributes
        assert_same(current, photos, flags=flags_kept)
        assert all(p.image is not None and p.image.is_file() for p in current)


def test_image_size_follows_exif_orientation(tmp_path):
    path = tmp_path / "rotated.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored landscape, shown portrait
    Image.new("RGB", (400, 300)).save(path, exif=exif)
    assert image_size(path) == (300, 400)


def test_bad_labels_are_named_clearly(photos, tmp_path):
    write_yolo(photos, tmp_path / "y")
    (tmp_path / "y/labels/train/two.txt").write_text("9 0.5 0.5 0.1 0.1\n")
    with pytest.raises(LabelFormatError, match=r"two\.txt:1: class 9 is not in names"):
        read_yolo(tmp_path / "y")
    (tmp_path / "y/labels/train/two.txt").write_text("6 0.5 0.5 0.1 0.1\n")  # one past 0-5
    with pytest.raises(LabelFormatError, match=r"two\.txt:1: class 6 is not in names"):
        read_yolo(tmp_path / "y")
    (tmp_path / "y/labels/train/two.txt").write_text("0 0.5 0.5\n")
    with pytest.raises(LabelFormatError, match="expected 'class cx cy w h'"):
        read_yolo(tmp_path / "y")

    coco = json.loads(write_coco(photos, tmp_path / "c").read_text())
    coco["categories"][0]["name"] = "die"
    (tmp_path / "c/annotations/instances_default.json").write_text(json.dumps(coco))
    with pytest.raises(LabelFormatError, match="expected a class named '1'..'6'.*'die'"):
        read_coco(tmp_path / "c")

    tasks = json.loads(write_labelstudio(photos, tmp_path / "ls").read_text())
    tasks[0]["predictions"][0]["result"][0]["value"]["rectanglelabels"] = ["1", "2"]
    (tmp_path / "ls/tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(LabelFormatError, match="region die1 needs one label"):
        read_labelstudio(tmp_path / "ls")
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    with pytest.raises(LabelFormatError, match="neither COCO nor"):
        detect_format(tmp_path / "junk.json")


def test_config_is_valid_xml():
    root = ET.fromstring(labelstudio_config())
    assert root.find("RectangleLabels").get("toName") == root.find("Image").get("name")


ULTRALYTICS_CHECK = """
import json, sys
from ultralytics.data.dataset import YOLODataset
from ultralytics.data.utils import check_det_dataset
d = check_det_dataset(sys.argv[1])
ds = YOLODataset(img_path=d["train"], data=d, task="detect", augment=False, imgsz=320)
print(json.dumps({"names": d["names"], "labels": {
    lb["im_file"].rsplit("/", 1)[1]: [lb["cls"].ravel().tolist(), lb["bboxes"].tolist()]
    for lb in ds.labels}}))
"""


@pytest.mark.slow
def test_ultralytics_loads_the_yolo_dataset_as_is(photos, tmp_path):
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("ultralytics") is None:
        pytest.skip("ultralytics is not installed (it comes with the [train] extra)")
    data_yaml = write_yolo(photos, tmp_path / "yolo", cocked_class=True)
    env = {**os.environ, "YOLO_OFFLINE": "1", "YOLO_CONFIG_DIR": str(tmp_path / "ycfg")}
    proc = subprocess.run(
        [sys.executable, "-c", ULTRALYTICS_CHECK, str(data_yaml)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["names"] == {str(i): n for i, n in enumerate([*"123456", "cocked"])}
    assert len(seen["labels"]) == len(photos)
    for photo in photos:
        classes, boxes = seen["labels"][photo.flat_name]
        want = [6 if d.cocked else d.value - 1 for d in photo.dice]
        assert classes == want
        for (cx, cy, w, h), die in zip(boxes, photo.dice, strict=True):
            x1, y1, x2, y2 = die.box
            assert cx * photo.width == pytest.approx((x1 + x2) / 2, abs=0.01)
            assert w * photo.width == pytest.approx(x2 - x1, abs=0.01)
            assert cy * photo.height == pytest.approx((y1 + y2) / 2, abs=0.01)
            assert h * photo.height == pytest.approx(y2 - y1, abs=0.01)


def test_photos_sharing_a_stem_keep_their_own_labels(tmp_path):
    photos = []
    for n, name in enumerate(["x.jpg", "x.png", "sub/x.jpg", "sub__x.jpg"], 1):
        path = tmp_path / "p" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (100 + n, 80)).save(path)
        photos.append(LabelledPhoto(name, 100 + n, 80, [Die(n, (n, n, 10.0 + n, 20.0), 0.9)], path))
    for fmt in ("yolo", "coco", "labelstudio"):
        out = tmp_path / fmt
        write_labels(photos, out, fmt, images="copy")
        back = read_labels(out)
        assert sorted((p.width, [d.value for d in p.dice]) for p in back) == [
            (101, [1]),
            (102, [2]),
            (103, [3]),
            (104, [4]),
        ]
    assert len(list((tmp_path / "yolo/labels/train").glob("*.txt"))) == 4


def test_yolo_split_folders_as_roboflow_exports_them(photos, tmp_path):
    write_yolo(photos[:2], tmp_path / "a")
    write_yolo(photos[2:], tmp_path / "b")
    root = tmp_path / "export"
    for split, src in (("train", tmp_path / "a"), ("valid", tmp_path / "b")):
        (root / split).mkdir(parents=True)
        (src / "images/train").rename(root / split / "images")
        (src / "labels/train").rename(root / split / "labels")
    (root / "data.yaml").write_text(
        "train: train/images\nval: valid/images\nnames: ['1','2','3','4','5','6']\n"
    )
    assert detect_format(root) == "yolo"
    assert_same(read_labels(root), photos, flags=False)


def test_scores_are_the_readers_confidence_in_the_value_too(tmp_path):
    image = tmp_path / "p.jpg"
    Image.new("RGB", (640, 480)).save(image)
    dice = [
        Die(4, (10, 10, 50, 50), 0.95, face_confidence=0.38, unsure=True),
        Die(2, (100, 10, 140, 50), 0.70, face_confidence=0.99),
    ]
    photo = LabelledPhoto("p.jpg", 640, 480, dice, image=image)
    task = json.loads(write_labelstudio([photo], tmp_path / "ls").read_text())[0]
    pred = task["predictions"][0]
    assert pred["score"] == 0.38  # the photo with a doubtful value sorts first in Label Studio
    assert [r["score"] for r in pred["result"] if r["type"] == "rectanglelabels"] == [0.38, 0.7]
    coco = json.loads(write_coco([photo], tmp_path / "coco").read_text())
    assert [a["score"] for a in coco["annotations"]] == [0.38, 0.7]
