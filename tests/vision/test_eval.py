"""Evaluation of datasets: layouts, labels and sidecars, and evaluate_dataset end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision import DiceReader, evaluate_dataset
from vision.evaluate import DatasetError, find_images, load_labels
from vision.matching import ROLLING
from vision.types import Die, Reading


def _write(root: Path, rel: str, labels: str | None, size=(320, 320), colour=(90, 90, 90)):
    image = root / rel
    image.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(image)
    if labels is not None:
        label = root / rel.replace("images", "labels", 1)
        label = label.with_suffix(".txt")
        label.parent.mkdir(parents=True, exist_ok=True)
        label.write_text(labels)
    return image


def test_dataset_layouts(tmp_path):
    flat = tmp_path / "flat"
    _write(flat, "images/a.png", "2 0.5 0.5 0.1 0.1\n")
    assert [p.name for p in find_images(flat)[0]] == ["a.png"]

    split = tmp_path / "split"
    _write(split, "images/valid/b.png", "")
    _write(split, "images/train/c.png", "")
    assert [p.name for p in find_images(split, "val")[0]] == ["b.png"]
    assert [p.name for p in find_images(split, "train")[0]] == ["c.png"]

    ydir = tmp_path / "yaml"
    _write(ydir, "eval/images/d.png", "6 0.5 0.5 0.1 0.1\n")
    (ydir / "data.yaml").write_text(
        "val: eval/images\nnames:\n  0: '1'\n  1: '2'\n  2: '3'\n  3: '4'\n  4: '5'\n  5: '6'\n  6: cocked\n"
    )
    for ds in (ydir, ydir / "data.yaml"):
        images, names = find_images(ds, "val")
        assert [p.name for p in images] == ["d.png"] and names[6] == "cocked"
    truth = load_labels(images[0]).truth(320, 320, names)
    assert truth[0].value is None and truth[0].cocked

    with pytest.raises(DatasetError, match="no 'test' entry .*pass --split val to read"):
        find_images(ydir, "test")
    # `dicecam label --format yolo` output holds no held-out photos (val: [], for CVAT)
    labelled = tmp_path / "labelled"
    _write(labelled, "images/train/e.png", "")
    (labelled / "data.yaml").write_text("train: images/train\nval: []\n")
    with pytest.raises(
        DatasetError, match=r"no photos for 'val' \(val: \[\]\): pass --split train"
    ):
        find_images(labelled, "val")
    assert [p.name for p in find_images(labelled, "train")[0]] == ["e.png"]
    with pytest.raises(DatasetError, match="no such dataset"):
        find_images(tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="expected a data.yaml"):
        find_images(tmp_path / "flat" / "labels")


def test_labels_polygons_sidecars_and_errors(tmp_path):
    image = _write(
        tmp_path, "images/p.png", "0 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n4 0.5 0.5 0.2 0.2\n"
    )
    item = load_labels(image)
    assert item.labels[0] == pytest.approx((0, 0.2, 0.2, 0.2, 0.2))
    truth = item.truth(100, 200)
    assert truth[1].value == 5 and truth[1].box == pytest.approx((40, 80, 60, 120))

    meta = tmp_path / "meta" / "p.json"
    meta.parent.mkdir()
    meta.write_text(json.dumps({"dice": [{"state": "table"}, {"state": "cocked"}]}))
    item = load_labels(image)
    assert [t.on_table for t in item.truth(100, 100)] == [True, True] and item.bust is False
    # vision.synth's sidecar lists hidden dice too ("labelled": false): they are not label lines,
    # but a hidden die off the table still makes the roll a bust
    dice = [
        {"state": "table", "labelled": True},
        {"state": "in_air", "labelled": False},
        {"state": "off_table", "labelled": True},
    ]
    meta.write_text(json.dumps({"width": 100, "dice": dice}))
    item = load_labels(image)
    assert [t.on_table for t in item.truth(100, 100)] == [True, False] and item.bust is True
    dice[1]["state"] = "table"
    dice[2]["state"] = "table"
    meta.write_text(json.dumps({"dice": dice}))
    assert load_labels(image).bust is False
    # a die in the air above the surface has not landed: neither on nor off, the roll unsettled;
    # one in the air beyond the surface's edge is leaving the table
    surface = {"table": [10.0, 8.0], "interior": None}
    dice = [
        {"state": "table", "position": [0.0, 0.0, 0.5]},
        {"state": "in_air", "position": [3.0, -2.0, 4.0]},
    ]
    meta.write_text(json.dumps({"dice": dice, "scene": {"surface": surface}}))
    item = load_labels(image)
    assert item.states == ["table", ROLLING] and item.bust is None
    assert [t.on_table for t in item.truth(100, 100)] == [True, None]
    dice[1]["position"] = [11.0, 0.0, 4.0]
    meta.write_text(json.dumps({"dice": dice, "scene": {"surface": surface}}))
    item = load_labels(image)
    assert item.states == ["table", "in_air"] and item.bust is True
    # in a tray the interior is the surface: above the table beside it is beyond its edge
    surface["interior"] = [5.0, 4.0]
    dice[1]["position"] = [7.0, 0.0, 4.0]
    meta.write_text(json.dumps({"dice": dice, "scene": {"surface": surface}}))
    assert load_labels(image).bust is True
    assert load_labels(image).surface_in_view is None  # the sidecar gives no outline
    # vision.synth's outline: a polygon, null (the surface fills the frame) or [] (none in view)
    for outline, in_view in (([[0, 0], [9, 0], [9, 9]], True), (None, True), ([], False)):
        meta.write_text(json.dumps({"dice": dice, "outline": outline}))
        assert load_labels(image).surface_in_view is in_view
    meta.write_text(json.dumps({"dice": [{"state": "table"}]}))
    with pytest.raises(DatasetError, match="one labelled die per label line"):
        load_labels(image)

    bad = _write(tmp_path, "images/q.png", "2 0.5 0.5\n")
    with pytest.raises(DatasetError, match=r"q.txt:1: expected 'class cx cy w h'"):
        load_labels(bad)
    worse = _write(tmp_path, "images/r.png", "two 0.5 0.5 0.1 0.1\n")
    with pytest.raises(DatasetError, match="r.txt:1: expected numbers"):
        load_labels(worse)
    # these crashed dicecam eval (NaN box sizes, an infinite class) or went through unseen
    for n, (line, message) in enumerate(
        [
            ("0 nan 0.5 0.1 0.1", "expected finite numbers"),
            ("inf 0.5 0.5 0.1 0.1", "expected numbers"),
            ("0 0.5 0.5 -0.1 0.1", "expected a box of positive width and height"),
        ]
    ):
        odd = _write(tmp_path, f"images/s{n}.png", line + "\n")
        with pytest.raises(DatasetError, match=f"s{n}.txt:1: {message}"):
            load_labels(odd)
    undecodable = _write(tmp_path, "images/u.png", "")
    undecodable.parent.parent.joinpath("labels/u.txt").write_bytes(b"\xff\xfe0 0.5")
    with pytest.raises(DatasetError, match="cannot read labels .*u.txt"):
        load_labels(undecodable)


def _models():
    pytest.importorskip("onnx", reason="the onnx package builds the test model")
    from dicecam_testing import onnx_models

    return onnx_models


def test_evaluate_dataset_end_to_end(tmp_path):
    models = _models()
    # the model always sees one 3 centred at (100, 100), 40 px wide, in a 320x320 input
    model = models.make_model(tmp_path / "m.onnx", models.raw_preds([(100, 100, 40, 40, {2: 0.9})]))
    ds = tmp_path / "ds"
    _write(ds, "images/right.png", "2 0.3125 0.3125 0.125 0.125\n")  # a 3 there: exact
    _write(ds, "images/wrong.png", "3 0.3125 0.3125 0.05 0.05\n")  # a 4 there (small box)
    _write(ds, "images/empty.png", "")  # no dice: the prediction is extra
    _write(ds, "images/missed.png", "0 0.8 0.8 0.1 0.1\n2 0.3125 0.3125 0.125 0.125\n")
    broken = ds / "images" / "zz_broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff garbage")
    (ds / "labels" / "zz_broken.txt").write_text("4 0.5 0.5 0.1 0.1\n")

    seen = []
    result = evaluate_dataset(ds, model=model, progress=lambda n, total: seen.append((n, total)))
    assert seen[-1] == (5, 5)
    assert result.images == 5 and len(result.errors) == 1
    assert "zz_broken.jpg" in result.errors[0][0]
    assert result.truth_dice == 5  # 1 + 1 + 0 + 2 + 1 (the broken photo's die is missed)
    assert result.predicted_dice == 4 and result.matched == 3
    assert result.face_accuracy == pytest.approx(2 / 3)
    assert result.recall == pytest.approx(3 / 5)
    assert result.precision == pytest.approx(3 / 4)
    assert result.exact_accuracy == pytest.approx(1 / 5)
    assert result.confusion[3][2] == 1 and result.confusion[2][2] == 2
    assert result.median_latency_ms is not None and result.median_latency_ms > 0
    # any object with read() will do, e.g. a reader with a higher threshold that finds nothing
    none = evaluate_dataset(ds, reader=DiceReader(model, conf=0.95))
    assert (
        none.recall == 0 and none.precision is None and none.exact_accuracy == pytest.approx(1 / 5)
    )


class _BustingReader:
    """Reads one die at the labelled spot of every photo, off the table where the name says so."""

    def read(self, image, *, expected_dice=None):
        off = Path(image).stem.startswith("off")
        return Reading(320, 320, [Die(3, (90, 90, 110, 110), 0.9, on_table=not off)])


def test_all_on_table_counts_false_busts_on_photos_without_sidecars(tmp_path):
    ds = tmp_path / "ds"
    label = "2 0.3125 0.3125 0.0625 0.0625\n"
    _write(ds, "images/off_busted.png", label)  # ordinary photo, read as a bust: a false one
    _write(ds, "images/on_fine.png", label)  # ordinary photo, no bust
    _write(ds, "images/off_truly.png", label)  # its sidecar says the die did leave the table
    meta = ds / "meta" / "off_truly.json"
    meta.parent.mkdir()
    meta.write_text(json.dumps({"dice": [{"state": "off_table"}]}))

    plain = evaluate_dataset(ds, reader=_BustingReader())
    # without the flag only the photo with a sidecar counts for the table figures
    assert plain.table.images == 1 and plain.table.clean_images == 0
    assert plain.table.false_bust_rate is None

    result = evaluate_dataset(ds, reader=_BustingReader(), all_on_table=True)
    t = result.table
    assert t.images == 3 and t.clean_images == 2 and t.false_busts == 1
    assert t.false_bust_rate == pytest.approx(0.5)
    assert [Path(p).name for p in t.false_bust_images] == ["off_busted.png"]
    assert t.truth_off == 1 and t.found_off == 1 and t.recall == 1  # the sidecar still rules
    assert t.to_dict()["false_busts"] == 1 and t.to_dict()["clean_images"] == 2
    assert "false busts       50.00%  (1/2 photos" in result.format()


class _OneDieReader:
    """Finds the one die in view of every photo, on the table; remembers the count it was told."""

    def __init__(self) -> None:
        self.told: dict[str, int | None] = {}

    def read(self, image, *, expected_dice=None):
        self.told[Path(image).stem] = expected_dice
        die = Die(3, (90, 90, 110, 110), 0.9)
        return Reading(320, 320, [die], expected_dice=expected_dice)


def test_expect_rolled_tells_the_dice_rolled_and_a_die_out_of_the_photo_busts(tmp_path):
    ds = tmp_path / "ds"
    label = "2 0.3125 0.3125 0.0625 0.0625\n"
    in_view = {"state": "table", "labelled": True}
    for name in ("gone", "hidden", "plain"):
        _write(ds, f"images/{name}.png", label)
    (ds / "meta").mkdir()
    gone = [in_view, {"state": "off_table", "labelled": False}]  # it fell out of the photo
    hidden = [in_view, {"state": "table", "labelled": False}]  # behind a tray's rim
    (ds / "meta" / "gone.json").write_text(json.dumps({"dice": gone}))
    (ds / "meta" / "hidden.json").write_text(json.dumps({"dice": hidden}))

    plain = evaluate_dataset(ds, reader=_OneDieReader()).table
    assert plain.bust_rolls == 0 and plain.all_bust_rolls == 1  # no die in view is off
    assert plain.all_busts_caught == 0 and plain.false_busts == 0 and plain.clean_images == 1

    reader = _OneDieReader()
    result = evaluate_dataset(ds, reader=reader, expect_rolled=True)
    assert reader.told == {"gone": 2, "hidden": 2, "plain": 1}  # no sidecar: the labels
    t = result.table
    assert t.all_busts_caught == 1 and t.all_bust_recall == 1  # missing: caught in a turn
    assert t.false_busts == 1 and t.clean_images == 1  # a hidden die busts a clean roll too
    assert t.unseen_busts == 1  # ... told apart: no reader could have found it
    assert t.to_dict()["all_bust_rolls"] == 1
    assert "any die off     100.00%  (1/1 rolls" in result.format()


def test_evaluate_dataset_rejects_an_empty_dataset(tmp_path):
    (tmp_path / "images" / "val").mkdir(parents=True)
    with pytest.raises(DatasetError, match="no images"):
        evaluate_dataset(tmp_path, reader=object())
    flat = tmp_path / "flat"
    (flat / "images").mkdir(parents=True)
    with pytest.raises(DatasetError, match="no photos in .*images: the folder is empty"):
        evaluate_dataset(flat, reader=object())
    # photos without a single label file: no truth to measure against (it printed 0% figures)
    from PIL import Image

    Image.new("RGB", (64, 64)).save(flat / "images" / "a.png")
    with pytest.raises(DatasetError, match="no label file for any of the 1 photos"):
        evaluate_dataset(flat, reader=object())


@pytest.mark.slow
def test_shipped_model_reads_real_photos_as_its_card_says(roboflow_eval, repo_root):
    model = repo_root / "models" / "dicecam-reader.onnx"
    if not model.is_file():
        pytest.skip(f"shipped model not committed yet: {model}")
    card = json.loads(model.with_suffix(".json").read_text())["evaluations"]
    stated = card["roboflow-dice eval (real)"]
    result = evaluate_dataset(roboflow_eval, model=model)
    assert result.images == stated["images"] == 132 and not result.errors
    # the figures the model card states (the targets, 99.5% / 99.5% / 97%, are not met)
    got = result.to_dict()
    for key in ("face_accuracy", "recall", "precision", "exact_accuracy"):
        assert got[key] == pytest.approx(stated[key], abs=0.01), key
    assert np.median(result.latencies_ms) < 1000


class _FixedReader:
    """Reads the same dice in every photo: a 3 at the first label, a 5 at the second."""

    def read(self, image, *, expected_dice=None):
        dice = [Die(3, (90, 90, 110, 110), 0.9), Die(5, (190, 90, 210, 110), 0.9)]
        return Reading(320, 320, dice)


def test_clear_dice_get_figures_of_their_own(tmp_path):
    ds = tmp_path / "ds"
    # a 3 read right and a 4 read as 5, plus a third die the reader never finds
    labels = "2 0.3125 0.3125 0.0625 0.0625\n3 0.625 0.3125 0.0625 0.0625\n1 0.9 0.9 0.05 0.05\n"
    for name in ("sharp", "shaken", "old"):
        _write(ds, f"images/{name}.png", labels)
    (ds / "meta").mkdir()
    resting = {"state": "table", "moving": False, "visible": 1.0}
    sharp = {"motion_blur_px": 0.0, "defocus_sigma": 0.6}
    dice = [resting, resting, resting]
    (ds / "meta" / "sharp.json").write_text(json.dumps({"dice": dice, "scene": {"post": sharp}}))
    shaken = {"motion_blur_px": 4.0, "defocus_sigma": 0.0}  # camera shake: nothing is clear
    (ds / "meta" / "shaken.json").write_text(json.dumps({"dice": dice, "scene": {"post": shaken}}))
    old = [{"state": "table"}] * 3  # a sidecar from before dice said whether they moved
    (ds / "meta" / "old.json").write_text(json.dumps({"dice": old, "scene": {"post": sharp}}))

    result = evaluate_dataset(ds, reader=_FixedReader())
    assert result.face_accuracy == pytest.approx(3 / 6)  # every photo: 3 right, 4 read as 5
    assert result.clear == [1, 2, 3]  # only the sharp photo's dice: 1 read right, 2 found, 3
    clear = result.to_dict()["clear_dice"]
    assert clear["face_accuracy"] == 0.5 and clear["recall"] == pytest.approx(0.6667, abs=1e-4)
    assert "clear dice        face 50.00% (1/2), found 66.67% (2/3)" in result.format()

    partly_hidden = [resting, {**resting, "visible": 0.5}, {**resting, "moving": True}]
    meta = {"dice": partly_hidden, "scene": {"post": sharp}}
    (ds / "meta" / "sharp.json").write_text(json.dumps(meta))
    assert evaluate_dataset(ds, reader=_FixedReader()).clear == [1, 1, 1]
    # without sidecars there is nothing to say
    for meta_file in (ds / "meta").iterdir():
        meta_file.unlink()
    plain = evaluate_dataset(ds, reader=_FixedReader())
    assert plain.to_dict()["clear_dice"] is None and "clear dice" not in plain.format()


class _CountingReader:
    """Records the dice count it is told and reads that many dice at the first label's spot."""

    def __init__(self) -> None:
        self.told: dict[str, int | None] = {}

    def read(self, image, *, expected_dice=None):
        self.told[Path(image).name] = expected_dice
        dice = [Die(3, (90, 90, 110, 110), 0.9)] * (expected_dice or 0)
        return Reading(320, 320, dice, expected_dice=expected_dice)


def test_expect_count_tells_the_reader_each_photos_labelled_dice(tmp_path):
    ds = tmp_path / "ds"
    _write(ds, "images/two.png", "2 0.3125 0.3125 0.0625 0.0625\n4 0.6 0.3 0.06 0.06\n")
    _write(ds, "images/one.png", "2 0.3125 0.3125 0.0625 0.0625\n")
    _write(ds, "images/none.png", "")
    plain = _CountingReader()
    evaluate_dataset(ds, reader=plain)
    assert set(plain.told.values()) == {None}
    told = _CountingReader()
    result = evaluate_dataset(ds, reader=told, expect_count=True)
    # a photo with no labelled die is read without a count: nobody rolls no dice
    assert told.told == {"two.png": 2, "one.png": 1, "none.png": None}
    assert result.to_dict()["truth_dice"] == 3
    assert result.to_dict()["dice_count"] == {"photos": 2, "short": 0, "added": 0, "dropped": 0}
    assert evaluate_dataset(ds, reader=plain).to_dict()["dice_count"] is None
