"""Labels from other tools and edge cases of the formats: a cocked die without a top face,
boxes past the photo's edge, YOLO folders whose names collide, other Label Studio configs and
skipped tasks."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from vision.labelling import (
    LabelledPhoto,
    read_coco,
    read_labels,
    read_labelstudio,
    read_yolo,
    write_coco,
    write_labels,
    write_labelstudio,
    write_yolo,
)
from vision.types import Die


def test_a_cocked_die_without_a_top_face_goes_through_coco_and_label_studio(tmp_path):
    """A die read as class 'cocked' (value 0) had no place in COCO or Label Studio; YOLO takes it
    as class 6 with --cocked-class and says so without it."""
    path = tmp_path / "p.jpg"
    Image.new("RGB", (200, 100)).save(path)
    photo = LabelledPhoto("p.jpg", 200, 100, [Die(0, (10, 10, 40, 40), 0.9, cocked=True)], path)
    coco = read_coco(write_coco([photo], tmp_path / "c", images="link"))
    ls = read_labelstudio(write_labelstudio(coco, tmp_path / "ls", images="link"))
    (die,) = ls[0].dice
    assert (die.value, die.cocked, die.box) == (0, True, (10.0, 10.0, 40.0, 40.0))
    again = read_yolo(write_yolo(ls, tmp_path / "y", cocked_class=True).parent)
    assert [(d.value, d.cocked) for d in again[0].dice] == [(0, True)]
    with pytest.raises(ValueError, match="write YOLO with --cocked-class"):
        write_yolo(ls, tmp_path / "y2")


def test_an_import_refused_for_a_faceless_cocked_die_names_it_and_writes_nothing(tmp_path, capsys):
    """`dicecam labels import` of a Label Studio export with a die labelled 'cocked' failed after
    writing images/, labels/ and cvat-yolo-1.1/: the same command with --cocked-class then
    answered '--out is not empty'. It now names the photo and leaves --out as it was."""
    from service.cli import main

    (tmp_path / "photos").mkdir()
    for name in ("a.jpg", "b.jpg"):
        Image.new("RGB", (200, 100)).save(tmp_path / "photos" / name)
    task = _ls_task([{"result": [_rect("r1", "cocked")]}])
    task["data"]["image"] = "/data/local-files/?d=b.jpg"
    other = {**_ls_task([{"result": [_rect("r2", "4")]}]), "id": 2}
    other["data"] = {"image": "/data/local-files/?d=a.jpg", "width": 200, "height": 100}
    (tmp_path / "export.json").write_text(json.dumps([other, task]))
    argv = ["labels", "import", str(tmp_path / "export.json")]
    argv += ["--images-from", str(tmp_path / "photos"), "--out", str(tmp_path / "t")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "1 photo(s) (b.jpg)" in err and "--cocked-class" in err
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())
    assert main([*argv, "--cocked-class"]) == 0
    assert (tmp_path / "t" / "labels" / "train" / "b.txt").read_text().startswith("6 ")


def test_yolo_boxes_are_clipped_to_the_photo(tmp_path):
    """A rotated Label Studio box by an edge ran past it; ultralytics drops a photo whose labels
    do, so boxes are clipped (and one wholly outside is left out)."""
    path = tmp_path / "p.jpg"
    Image.new("RGB", (200, 100)).save(path)
    dice = [Die(1, (2.0, -16.3, 29.3, 11.0), 0.9), Die(2, (210, 10, 230, 30), 0.9)]
    data = write_yolo([LabelledPhoto("p.jpg", 200, 100, dice, path)], tmp_path / "y")
    (label,) = (data.parent / "labels").rglob("p.txt")
    (line,) = label.read_text().splitlines()
    numbers = [float(v) for v in line.split()[1:]]
    assert all(0 <= v <= 1 for v in numbers) and numbers[3] == pytest.approx(0.11)


def test_yolo_pairs_each_label_with_its_own_photo(tmp_path):
    """The same stem in two splits is two photos (one was dropped), and `dice.txt` takes
    `dice.jpg`, not `dice.a.jpg` nor an iPhone's `dice.AAE` sidecar."""
    for split, n in (("train", 1), ("valid", 2)):
        (tmp_path / split / "images").mkdir(parents=True)
        (tmp_path / split / "labels").mkdir(parents=True)
        Image.new("RGB", (100, 100)).save(tmp_path / split / "images" / "IMG_1.jpg")
        (tmp_path / split / "labels" / "IMG_1.txt").write_text("0 0.5 0.5 0.1 0.1\n" * n)
    assert sorted(len(p.dice) for p in read_yolo(tmp_path)) == [1, 2]

    cvat = tmp_path / "cvat" / "obj_train_data"
    cvat.mkdir(parents=True)
    Image.new("RGB", (300, 100)).save(cvat / "dice.jpg")
    Image.new("RGB", (50, 400)).save(cvat / "dice.a.jpg")
    (cvat / "dice.AAE").write_text("<plist/>")
    (cvat / "dice.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    (cvat / "dice.a.txt").write_text("1 0.5 0.5 0.1 0.1\n")
    sizes = {p.image.name: (p.width, p.height) for p in read_yolo(tmp_path / "cvat")}
    assert sizes == {"dice.jpg": (300, 100), "dice.a.jpg": (50, 400)}


def _ls_task(annotations, predictions=()):
    return {
        "id": 1,
        "data": {"image": "p.jpg", "width": 200, "height": 100},
        "annotations": list(annotations),
        "predictions": list(predictions),
    }


def _rect(region, label, x=10.0, kind="rectanglelabels"):
    value = {"x": x, "y": 10.0, "width": 10.0, "height": 20.0}
    if kind == "rectanglelabels":
        value["rectanglelabels"] = [label]
    return {"id": region, "type": kind, "from_name": "label", "to_name": "image", "value": value}


def test_label_studio_exports_of_other_configs_and_skipped_tasks(tmp_path):
    # <Rectangle> and <Labels>: a region comes as a rectangle and a labels result of one id
    labels = {"id": "r1", "type": "labels", "value": {"labels": ["3"]}}
    task = _ls_task([{"result": [_rect("r1", None, kind="rectangle"), labels]}])
    (tmp_path / "a.json").write_text(json.dumps([task]))
    (photo,) = read_labelstudio(tmp_path / "a.json")
    assert [d.value for d in photo.dice] == [3]  # it imported no die, silently
    # a task whose only annotation was cancelled (skipped) is left out, not read from the
    # model's prediction as if someone had checked it
    skipped = _ls_task([{"was_cancelled": True, "result": []}], [{"result": [_rect("p", "5")]}])
    (tmp_path / "b.json").write_text(json.dumps([skipped]))
    assert read_labelstudio(tmp_path / "b.json") == []
    # the latest annotation by time, offsets and fractions of a second included
    older = {"updated_at": "2026-11-26T09:00:00.500000+02:00", "result": [_rect("o", "1")]}
    newer = {"updated_at": "2026-11-26T08:00:00Z", "result": [_rect("n", "2")]}
    for order in ([newer, older], [older, newer]):
        (tmp_path / "c.json").write_text(json.dumps([_ls_task(order)]))
        assert [d.value for d in read_labelstudio(tmp_path / "c.json")[0].dice] == [2]


def test_label_studio_unannotated_task_takes_its_best_prediction_and_turns_rotated_boxes(tmp_path):
    low = {"score": 0.3, "result": [_rect("l", "1")]}
    high = {"score": 0.8, "result": [_rect("h", "6")]}
    (tmp_path / "p.json").write_text(json.dumps([_ls_task([], [low, high])]))
    assert [d.value for d in read_labelstudio(tmp_path / "p.json")[0].dice] == [6]
    # 20 x 20 px at (20, 10) of a 200 x 100 photo, turned 90 degrees clockwise about its corner
    turned = _rect("t", "4")
    turned["value"]["rotation"] = 90
    (tmp_path / "r.json").write_text(json.dumps([_ls_task([{"result": [turned]}])]))
    (die,) = read_labelstudio(tmp_path / "r.json")[0].dice
    assert die.box == pytest.approx((0, 10, 20, 30))


def test_yolo_import_pairs_photos_that_share_a_stem(tmp_path):
    """x.jpg and x.png are labelled x.txt and x_2.txt; importing from the photos' folder paired
    x_2.txt with no photo and x.txt with the wrong one."""
    root = tmp_path / "photos"
    root.mkdir()
    Image.new("RGB", (200, 100)).save(root / "x.jpg")
    Image.new("RGB", (50, 400)).save(root / "x.png")
    photos = [
        LabelledPhoto("x.jpg", 200, 100, [Die(1, (10, 10, 30, 30), 0.9)], root / "x.jpg"),
        LabelledPhoto("x.png", 50, 400, [Die(2, (5, 5, 25, 25), 0.9)] * 2, root / "x.png"),
    ]
    write_labels(photos, tmp_path / "y", "yolo", images="none")
    got = {
        p.image.name: (p.width, p.height, len(p.dice))
        for p in read_labels(tmp_path / "y", image_root=root)
    }
    assert got == {"x.jpg": (200, 100, 1), "x.png": (50, 400, 2)}
