"""The die check: loaded beside the detector, it drops boxes that are not dice; its trainer mines
the detector's own mistakes."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import DiceReader
from vision.reader import ModelError
from vision.train.mining import background_boxes, is_val_scene, scene_of, yolo_items
from vision.verify import VERIFY_THRESHOLD, VerifyModel, verify_model_for

onnx = pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402
from dicecam_testing.die_check import starting_reader  # noqa: E402

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _detector(folder: Path) -> Path:
    """A dynamic 7-class detector that finds a 5 on the photo's dark left half and a 3 on its
    bright right half (a 640x480 photo is read at 320x256)."""
    preds = models.raw_preds([(60, 128, 20, 20, {4: 0.9}), (260, 128, 20, 20, {2: 0.8})])
    return models.make_model(folder / "det.onnx", preds, batch="b", dynamic=True)


@pytest.fixture
def photo() -> np.ndarray:
    bgr = np.full((480, 640, 3), 30, np.uint8)
    bgr[:, 320:] = 230
    return bgr


def test_a_die_check_beside_the_detector_drops_what_it_does_not_take_for_a_die(tmp_path, photo):
    detector = _detector(tmp_path)
    plain = DiceReader(detector, faces=False, table=None, second_look=0)
    assert plain.verify is None
    assert [d.value for d in plain.read(photo).dice] == [5, 3]

    models.bright_is_a_die(verify_model_for(detector), threshold="0.2", context="1.5")
    reader = DiceReader(detector, faces=False, table=None, second_look=0)
    assert isinstance(reader.verify, VerifyModel)
    assert (reader.verify.threshold, reader.verify.context) == (0.2, 1.5)
    (kept,) = reader.read(photo).dice
    assert kept.value == 3 and kept.box[0] > 320 and kept.confidence == pytest.approx(0.8)
    assert reader.read_batch([photo, photo[:, ::-1].copy()])[1].dice[0].box[0] < 320

    off = DiceReader(detector, faces=False, table=None, second_look=0, verify=False)
    assert off.verify is None and len(off.read(photo).dice) == 2


def test_threshold_comes_from_the_argument_the_setting_or_the_model(tmp_path, monkeypatch):
    plain = models.bright_is_a_die(tmp_path / "plain.onnx")
    assert VerifyModel(plain).threshold == VERIFY_THRESHOLD
    stored = models.bright_is_a_die(tmp_path / "stored.onnx", threshold="0.3")
    assert VerifyModel(stored).threshold == 0.3
    assert VerifyModel(stored, threshold=0.05).threshold == 0.05
    detector = _detector(tmp_path)
    shutil.copyfile(stored, verify_model_for(detector))
    monkeypatch.setenv("DICECAM_VERIFY_THRESHOLD", "0.07")
    assert DiceReader(detector, faces=False, table=None).verify.threshold == 0.07
    monkeypatch.setenv("DICECAM_VERIFY_MODEL", str(tmp_path / "gone.onnx"))  # the settings say
    with pytest.raises(ValueError, match=r"expected the die check \(an ONNX file\), got '.*gone"):
        DiceReader(detector, faces=False, table=None)


def test_bad_die_checks_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="die check not found"):
        VerifyModel(tmp_path / "missing.onnx")
    with pytest.raises(ValueError, match=r"expected 2 classes \(not a die, a die\)"):
        VerifyModel(models.bright_is_off(tmp_path / "three.onnx", classes=3))
    with pytest.raises(ValueError, match="threshold metadata, got 'low'"):
        VerifyModel(models.bright_is_a_die(tmp_path / "bad.onnx", threshold="low"))
    with pytest.raises(ValueError, match="expected 0 < threshold < 1, got 0.0"):
        VerifyModel(models.bright_is_a_die(tmp_path / "m.onnx"), threshold=0.0)
    detector = _detector(tmp_path)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot load die check"):
        DiceReader(detector, faces=False, table=None, verify=tmp_path / "junk.onnx")


def test_background_boxes_keep_clear_of_the_dice_and_are_sized_like_them():
    rng = np.random.default_rng(0)
    dice = [(100.0, 100.0, 140.0, 140.0), (300.0, 200.0, 340.0, 240.0)]
    boxes = background_boxes(rng, (480, 640), dice, 20)
    assert len(boxes) == 20
    for x1, y1, x2, y2 in boxes:
        assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480
        assert 24 <= x2 - x1 <= 64 and x2 - x1 == pytest.approx(y2 - y1)
        for d in dice:  # clear of each die grown by half its size (20 px a side)
            assert x2 < d[0] - 20 or x1 > d[2] + 20 or y2 < d[1] - 20 or y1 > d[3] + 20
    assert background_boxes(rng, (480, 640), [], 5) == []
    assert background_boxes(rng, (480, 640), dice, 0) == []
    # a die that fills the photo leaves no room
    assert background_boxes(rng, (100, 100), [(0.0, 0.0, 100.0, 100.0)], 5) == []


def test_real_photos_split_by_scene_so_copies_of_a_scene_stay_together(tmp_path):
    assert scene_of(Path("dice_59_jpg.rf.d052dc3edca4.jpg")) == "dice_59"
    assert scene_of(Path("my photo.jpg")) == "my photo"
    scenes = [f"dice_{i}" for i in range(200)]
    val = [s for s in scenes if is_val_scene(s)]
    assert 8 <= len(val) <= 35 and val == [s for s in scenes if is_val_scene(s)]

    images, labels = tmp_path / "images", tmp_path / "labels"
    images.mkdir()
    labels.mkdir()
    photo = np.full((100, 200, 3), 90, np.uint8)
    for scene in ("dice_1", "dice_2", "dice_3", "dice_4"):
        for copy in ("aa", "bb"):
            name = f"{scene}_jpg.rf.{copy}"
            cv2.imwrite(str(images / f"{name}.jpg"), photo)
            (labels / f"{name}.txt").write_text("2 0.5 0.5 0.1 0.2\n")
    cv2.imwrite(str(images / "dice_5_jpg.rf.cc.jpg"), photo)  # no labels: skipped
    (labels / "dice_5_jpg.rf.cc.txt").write_text("")
    found = {split: list(yolo_items(images, split)) for split in ("train", "val")}
    assert len(found["train"]) + len(found["val"]) == 8
    for split, items in found.items():
        for path, image, boxes, hidden in items:
            assert is_val_scene(scene_of(path)) == (split == "val")
            assert image.shape == (100, 200, 3) and hidden == []
            assert boxes == [pytest.approx((90.0, 40.0, 110.0, 60.0))]


def test_the_shipped_reader_has_its_die_check():
    shipped = REPO / "models" / "dicecam-reader.onnx"
    if not verify_model_for(shipped).is_file():
        pytest.skip("no die check shipped")
    reader = DiceReader(shipped, table=None)
    assert reader.verify is not None and reader.verify.model_path == verify_model_for(shipped)
    assert reader.verify.metadata.get("task") == "dicecam-verify"
    assert 0 < reader.verify.threshold < 0.5


def test_trainer_mines_the_shipped_detector_and_exports_a_die_check(tmp_path, capsys):
    pytest.importorskip("torch", reason="the train extra (torch) trains the die check")
    from vision.synth import write_dataset
    from vision.train.verify import main, train_verifier

    rolls = tmp_path / "rolls"
    write_dataset(rolls, 6, seed=3, size=(320, 240), val_fraction=0.34)
    real = tmp_path / "real" / "images"
    real.mkdir(parents=True)
    for split in ("train", "val"):  # the rolls again, as a YOLO folder of "real" photos
        for image in (rolls / "images" / split).glob("*.jpg"):
            shutil.copy(image, real / image.name)
            label = rolls / "labels" / split / f"{image.stem}.txt"
            (real.parent / "labels").mkdir(exist_ok=True)
            shutil.copy(label, real.parent / "labels" / label.name)
    out, cache = tmp_path / "m" / "verify.onnx", tmp_path / "mined.npz"
    lines: list[str] = []
    figures = train_verifier(
        [rolls], out, real=[real], epochs=1, background=3, cache=cache, log=lines.append
    )
    assert cache.is_file() and out.is_file() and out.with_suffix(".pt").is_file()
    assert figures["train_boxes"] > figures["train_false"] > 0  # background boxes at least
    assert 0 < figures["threshold"] <= 0.5
    model = VerifyModel(out)
    assert model.metadata["task"] == "dicecam-verify" and model.tta
    assert model.threshold == figures["threshold"] and model.context == 1.5
    p = model.probability(np.full((240, 320, 3), 128, np.uint8), [(10, 10, 40, 40)])
    assert p.shape == (1,) and 0.0 <= p[0] <= 1.0

    # the cache is reused: no mining the second time
    assert not any("mined crops from" in line for line in lines)
    assert main([str(rolls), "--cache", str(cache), "--out", str(out), "--epochs", "1"]) == 0
    assert f"mined crops from {cache}" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="expected sidecars in"):
        train_verifier([tmp_path / "nowhere"], tmp_path / "x.onnx", epochs=1)


def test_fine_tuned_readers_keep_the_starting_models_cocked_model_and_die_check(tmp_path):
    from vision.cocked import cocked_model_for
    from vision.train.finetune import _copy_side_models

    base = tmp_path / "base" / "reader.onnx"
    base.parent.mkdir()
    base.write_bytes(b"detector")
    cocked_model_for(base).write_bytes(b"cocked")
    verify_model_for(base).write_bytes(b"verify")
    tuned = tmp_path / "out" / "reader-ft.onnx"
    _copy_side_models(base, tuned)
    assert cocked_model_for(tuned).read_bytes() == b"cocked"
    assert verify_model_for(tuned).read_bytes() == b"verify"
    _copy_side_models(base, base)  # the same place: nothing to do, no error
    assert verify_model_for(base).read_bytes() == b"verify"
    verify_model_for(base).unlink()  # a starting model without one gets none
    _copy_side_models(base, tmp_path / "other" / "r.onnx")
    assert not verify_model_for(tmp_path / "other" / "r.onnx").exists()
    assert cocked_model_for(tmp_path / "other" / "r.onnx").is_file()


def test_boxes_the_check_drops_still_ask_for_the_second_look(tmp_path):
    # one die of 20 input pixels at (160, 128) whatever the input size: at the first look
    # (320x256) that is the photo's dark middle, which the check drops; at the second look
    # (640x480) a bright patch, which it keeps
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    detector = models.make_model(tmp_path / "small.onnx", preds, batch="b", dynamic=True)
    models.bright_is_a_die(verify_model_for(detector))
    photo = np.full((480, 640, 3), 20, np.uint8)
    photo[80:180, 100:220] = 240
    reader = DiceReader(detector, faces=False, table=None, second_look=640)
    seen: list[tuple[int, ...]] = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.shape) or run(blob, **kw)
    (die,) = reader.read(photo).dice
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    np.testing.assert_allclose(die.box, (150, 118, 170, 138), atol=1e-6)
    assert reader.read(np.full((480, 640, 3), 20, np.uint8)).dice == []  # dark: dropped twice


def test_a_fine_tuned_reader_lowers_the_die_checks_threshold_to_keep_its_new_dice(tmp_path):
    from vision.synth import write_dataset
    from vision.train.verify import calibrate_verifier

    # a starting reader: the shipped detector and face classifier, and a die check that takes
    # only bright crops for dice, at a threshold of 0.5
    base = starting_reader(tmp_path / "base")
    new = tmp_path / "new"
    write_dataset(new, 6, seed=5, size=(320, 240), val_fraction=0.0)
    out = tmp_path / "reader-ft-verify.onnx"
    lines: list[str] = []
    figures = calibrate_verifier(base, [new / "images"], out, log=lines.append)
    assert figures is not None and figures["dice"] > 0
    assert lines[0].startswith("die check: threshold 0.5 -> ")
    tuned = VerifyModel(out)
    assert tuned.threshold == figures["threshold"] <= 0.5 and tuned.context == 1.5
    assert tuned.metadata["task"] == "t"  # one entry per key: the old threshold is replaced
    assert [p.key for p in onnx.load(str(out)).metadata_props].count("threshold") == 1
    assert figures["dropped_before"] > 0 and tuned.threshold < 0.5  # dark dice were dropped
    floor = calibrate_verifier(base, [new / "images"], out, keep=1.0, floor=0.3, log=print)
    assert floor["threshold"] >= 0.3
    calibrate_verifier(base, [new / "images"], verify_model_for(base), log=print)  # in place
    assert VerifyModel(verify_model_for(base)).threshold == figures["threshold"]
    # a reader with no die check has nothing to calibrate
    verify_model_for(base).unlink()
    assert calibrate_verifier(base, [new / "images"], tmp_path / "x.onnx") is None


def test_the_die_check_is_found_beside_its_detector_and_crops_as_the_shipped_one_was_trained(
    tmp_path,
):
    shipped = REPO / "models" / "dicecam-reader.onnx"
    assert verify_model_for(shipped) == shipped.with_name("dicecam-reader-verify.onnx")
    assert verify_model_for(tmp_path / "reader.v2.onnx").name == "reader.v2-verify.onnx"
    if not verify_model_for(shipped).is_file():
        pytest.skip("no die check shipped")
    trained = VerifyModel(verify_model_for(shipped))
    # a die check without the metadata (an older export) crops as the shipped one was trained
    plain = VerifyModel(models.bright_is_a_die(tmp_path / "plain.onnx"))
    assert plain.context == trained.context == float(trained.metadata["context"])


def test_a_die_check_without_a_threshold_of_its_own_drops_boxes_under_a_tenth(tmp_path):
    # P(a die) = sigmoid(40 * (grey / 255 - 0.5)) on a plain grey photo: 0.18 at 118, 0.03 at
    # 106; the die check has no threshold in its metadata, so VERIFY_THRESHOLD (0.1) decides
    detector = _detector(tmp_path)
    models.bright_is_a_die(verify_model_for(detector))
    reader = DiceReader(detector, faces=False, table=None, second_look=0)
    for grey, kept in ((118, [5, 3]), (106, [])):
        photo = np.full((480, 640, 3), grey, np.uint8)
        p = reader.verify.probability(photo, [(100, 100, 140, 140)])[0]
        assert p == pytest.approx(1 / (1 + np.exp(-40 * (grey / 255 - 0.5))), rel=1e-3)
        assert [d.value for d in reader.read(photo).dice] == kept, (grey, p)


def _even(path: Path, **meta: str) -> Path:
    """A die check with logits (0, 0) whatever the crop: P(a die) is exactly 0.5."""
    from onnx import TensorProto, helper, numpy_helper

    inp = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, 48, 48])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 2])
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["m"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Unsqueeze", ["m", "one"], ["m2"]),
        helper.make_node("MatMul", ["m2", "w"], ["logits"]),
    ]
    inits = [
        numpy_helper.from_array(np.zeros((1, 2), np.float32), "w"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
    ]
    return models._save(helper.make_graph(nodes, "even", [inp], [out], inits), path, meta)


def test_a_box_whose_probability_is_the_threshold_itself_is_kept(tmp_path, photo):
    detector = _detector(tmp_path)
    _even(verify_model_for(detector), threshold="0.5")
    reader = DiceReader(detector, faces=False, table=None, second_look=0)
    assert reader.verify.probability(photo, [(10, 10, 50, 50)]).tolist() == [0.5]
    assert [d.value for d in reader.read(photo).dice] == [5, 3]  # it reaches 0.5: a die
    assert reader.verify.flags(photo, [(10, 10, 50, 50)]).tolist() == [True]


def test_a_die_check_asked_for_that_is_not_there_is_an_error_not_passed_over(tmp_path, photo):
    detector = _detector(tmp_path)
    with pytest.raises(ModelError, match=r"die check not found: .*det-verify\.onnx"):
        DiceReader(detector, faces=False, table=None, verify=True)
    not_asked = DiceReader(detector, faces=False, table=None, second_look=0)
    assert not_asked.verify is None and len(not_asked.read(photo).dice) == 2


def test_readers_of_one_detector_keep_each_their_own_die_check_threshold(tmp_path, monkeypatch):
    # the loaded models are kept per file (dicecam serve's check at start and its first photo
    # share one): a reader with another DICECAM_VERIFY_THRESHOLD gets a die check of its own
    detector = _detector(tmp_path)
    models.bright_is_a_die(verify_model_for(detector), threshold="0.3")
    monkeypatch.setenv("DICECAM_VERIFY_THRESHOLD", "0.07")
    first = DiceReader(detector, faces=False, table=None)
    monkeypatch.setenv("DICECAM_VERIFY_THRESHOLD", "0.2")
    second = DiceReader(detector, faces=False, table=None)
    monkeypatch.delenv("DICECAM_VERIFY_THRESHOLD")
    stored = DiceReader(detector, faces=False, table=None)
    assert (first.verify.threshold, second.verify.threshold) == (0.07, 0.2)
    assert stored.verify.threshold == 0.3


def test_the_readers_table_drops_a_box_off_the_surface_that_its_die_check_doubts(
    tmp_path, monkeypatch
):
    from vision.table import Calibration

    calibration = Calibration.from_pixels([(0, 0), (320, 0), (320, 480), (0, 480)], 640, 480)
    monkeypatch.setenv("DICECAM_CALIBRATION", str(calibration.save(tmp_path / "cal.json")))
    detector = _detector(tmp_path)  # a 5 on the left half (the surface), a 3 on the right
    models.bright_is_a_die(verify_model_for(detector))
    photo = np.full((480, 640, 3), 126, np.uint8)  # P(a die) 0.44: over 0.1, under 0.7
    reader = DiceReader(detector, faces=False, second_look=0)
    assert reader.table is not None and reader.verify is not None
    assert [(d.value, d.on_table) for d in reader.read(photo).dice] == [(5, True)]
    monkeypatch.setenv("DICECAM_OFFTABLE_MIN_DIE_CHECK", "0")  # the table asks it nothing
    trusting = DiceReader(detector, faces=False, second_look=0)
    assert [(d.value, d.on_table) for d in trusting.read(photo).dice] == [(5, True), (3, False)]
