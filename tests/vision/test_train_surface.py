"""Training the table models on rendered rolls: the surface outline (exported at the input size
asked for, its figures in the metadata) and the off-table die model; the runtime loads both."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the train extra (torch) trains the surface model", allow_module_level=True)

from vision.synth import write_dataset  # noqa: E402
from vision.table import SurfaceModel  # noqa: E402
from vision.train.surface import main, train_surface  # noqa: E402


@pytest.fixture(scope="module")
def rolls(tmp_path_factory):
    """Two small `dicecam synth` folders (12 photos in all, some in val)."""
    root = tmp_path_factory.mktemp("surface")
    folders = []
    for seed in (3, 4):
        out = root / f"synth-{seed}"
        write_dataset(out, 6, seed=seed, size=(320, 240), val_fraction=0.34)
        folders.append(out)
    return folders


def test_tiny_run_exports_a_model_of_the_asked_input_size(rolls, tmp_path):
    out = tmp_path / "new" / "folder" / "surface.onnx"
    figures = train_surface(rolls, out, input_size=64, epochs=1, batch=4, log=lambda _: None)
    assert figures["input"] == 64 and figures["epochs"] == 1 and figures["layers"] == 1
    assert figures["train_samples"] + figures["val_samples"] == 12
    assert 0.0 <= figures["val_mean_iou"] <= 1.0
    assert out.with_suffix(".pt").is_file()
    model = SurfaceModel(out)
    assert model.imgsz == (64, 64) and model.layers == 1
    assert model.metadata["input"] == "64" and str(rolls[1]) in model.metadata["data"]
    prob = model.probability(np.full((240, 320, 3), 128, np.uint8))
    assert prob.shape == (16, 16) and ((prob >= 0) & (prob <= 1)).all()
    assert not model.reads_dice  # a photo-only model: boxes change nothing
    photo = np.full((240, 320, 3), 128, np.uint8)
    assert np.array_equal(model.probability(photo, boxes=[(10, 10, 40, 40)]), prob)


def test_three_layer_model_trains_and_the_runtime_reads_its_layers(rolls, tmp_path):
    out = tmp_path / "layers.onnx"
    figures = train_surface(
        rolls, out, input_size=64, layers=3, epochs=1, batch=4, log=lambda _: None
    )
    assert figures["layers"] == 3 and 0.0 <= figures["val_mean_iou"] <= 1.0
    model = SurfaceModel(out)
    assert model.layers == 3 and model.metadata["layers"] == "3"
    probs = model.layer_probabilities(np.full((240, 320, 3), 128, np.uint8))
    assert probs.shape == (3, 16, 16) and np.allclose(probs.sum(0), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="expected 1 or 3 layers, got 2"):
        train_surface(rolls, tmp_path / "x.onnx", layers=2, epochs=1)


def test_command_line_trains_and_prints_figures(rolls, tmp_path, capsys):
    out = tmp_path / "cli.onnx"
    code = main([str(rolls[0]), "--out", str(out), "--input", "48", "--epochs", "1"])
    assert code == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["input"] == 48 and SurfaceModel(out).imgsz == (48, 48)


def test_width_and_the_certainty_gate_go_into_the_model_the_runtime_reads(rolls, tmp_path):
    from vision.train.surface import SurfaceNet

    def params(width: float) -> int:
        return sum(p.numel() for p in SurfaceNet(1, width).parameters())

    assert params(1.0) == 138905  # the net before widths (the earlier shipped model)
    assert params(2.0) > 3 * params(1.0)
    out = tmp_path / "wide.onnx"
    figures = train_surface(
        rolls, out, input_size=64, width=2.0, min_certainty=0.4, epochs=1, batch=4,
        log=lambda _: None,
    )  # fmt: skip
    assert figures["width"] == 2.0 and figures["params"] == params(2.0)
    model = SurfaceModel(out)
    assert model.metadata["width"] == "2.0" and model.min_certainty == 0.4
    assert model.probability(np.zeros((240, 320, 3), np.uint8)).shape == (16, 16)
    with pytest.raises(ValueError, match="expected a width above 0, got 0"):
        train_surface(rolls, tmp_path / "x.onnx", width=0, epochs=1)
    with pytest.raises(ValueError, match="expected 0 <= min_certainty < 1, got 1"):
        train_surface(rolls, tmp_path / "x.onnx", min_certainty=1, epochs=1)


def test_input_size_must_be_a_multiple_of_16(rolls, tmp_path):
    with pytest.raises(ValueError, match="multiple of 16, got 50"):
        train_surface(rolls, tmp_path / "x.onnx", input_size=50, epochs=1)


def test_offtable_die_model_trains_on_rendered_rolls(tmp_path):
    from vision.table import OffTableModel
    from vision.train.offtable import load_context_crops, train_offtable

    # seed 7 from index 150: index 151 has two dice on the floor beside the table
    rolls = tmp_path / "rolls"
    write_dataset(rolls, 4, seed=7, start=150, size=(320, 240), val_fraction=0.0)
    x, y = load_context_crops([rolls], "train")
    assert x.shape[1:] == (48, 48, 3) and len(x) == len(y) and 0 < y.sum() < len(y)
    out = tmp_path / "offtable.onnx"
    figures = train_offtable([rolls], out, epochs=1, batch=8, log=lambda _: None)
    assert figures["train_dice"] == len(x) and figures["train_off"] == int(y.sum())
    model = OffTableModel(out)
    assert model.metadata["task"] == "dicecam-offtable" and model.context == 4.0
    p = model.probability(np.zeros((240, 320, 3), np.uint8), [(10, 10, 30, 30)])
    assert p.shape == (1,) and 0.0 <= float(p[0]) <= 1.0


def test_offtable_needs_dice_on_and_off(tmp_path):
    from vision.train.offtable import train_offtable

    empty = tmp_path / "none"
    (empty / "meta" / "train").mkdir(parents=True)
    (empty / "meta" / "val").mkdir(parents=True)
    with pytest.raises(ValueError, match="expected dice both on and off the surface"):
        train_offtable([empty], tmp_path / "x.onnx", epochs=1)
    with pytest.raises(FileNotFoundError, match="expected sidecars in"):
        train_offtable([tmp_path / "nowhere"], tmp_path / "x.onnx", epochs=1)


def _real_photos(root):
    """A YOLO folder of real-like photos: two dice far apart, a photo without dice, a broken one."""
    from PIL import Image

    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    Image.new("RGB", (320, 240), (120, 110, 100)).save(root / "images" / "two.jpg")
    (root / "labels" / "two.txt").write_text("0 0.25 0.5 0.1 0.1\n3 0.75 0.5 0.1 0.1\n")
    Image.new("RGB", (320, 240), (120, 110, 100)).save(root / "images" / "none.jpg")
    (root / "images" / "broken.jpg").write_bytes(b"not a photo")
    (root / "labels" / "broken.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    return root


def test_real_photos_label_the_span_of_their_dice_as_surface(tmp_path):
    from vision.train.surface_data import TABLE_IN_PLAY, UNKNOWN, augmented_batch, load_real_surface

    images, codes = load_real_surface(_real_photos(tmp_path / "real"), size=100)
    assert images.shape == (1, 100, 100, 3) and codes.shape == (1, 100, 100)  # two.jpg only
    c = codes[0]
    # the dice (x 0.2-0.3 and 0.7-0.8, grown by a quarter) and the span between them: surface
    assert c[50, 19] == c[50, 50] == c[50, 80] == c[45, 50] == TABLE_IN_PLAY
    assert c[5, 50] == c[95, 50] == c[50, 5] == c[50, 95] == UNKNOWN  # nobody knows
    x, y, known = augmented_batch(np.random.default_rng(0), images, codes, 64)
    assert x.shape == (1, 3, 64, 64) and y.shape == (1, 1, 16, 16) and known.shape == (1, 16, 16)
    assert 0 < known.mean() < 0.5 and (y[0, 0][known[0] > 0.99] == 1).all()
    with pytest.raises(FileNotFoundError, match="no readable photos with labelled dice"):
        load_real_surface(tmp_path / "real", limit=0)


def test_the_loss_leaves_out_the_cells_nobody_labelled():
    import torch

    from vision.train.surface_net import surface_loss

    target = torch.ones(1, 1, 4, 4)
    known = torch.zeros(1, 4, 4)
    known[0, :2] = 1.0  # the top half is known surface
    logits = torch.full((1, 1, 4, 4), 2.0)
    other = logits.clone()
    other[0, 0, 2:] = -5.0  # says "not surface" where nobody knows: no cost
    assert float(surface_loss(logits, target, known)) == pytest.approx(
        float(surface_loss(other, target, known))
    )
    other[0, 0, :2] = -5.0  # and where it is known: a cost
    assert (
        float(surface_loss(other, target, known)) > float(surface_loss(logits, target, known)) + 1
    )
    # all known (a synthetic photo): the weighted loss is the plain one
    assert float(surface_loss(other, target, torch.ones(1, 4, 4))) == pytest.approx(
        float(surface_loss(other, target))
    )


def test_training_with_real_photos(rolls, tmp_path):
    real = _real_photos(tmp_path / "real")
    out = tmp_path / "real.onnx"
    figures = train_surface(
        rolls, out, input_size=64, epochs=1, batch=4, real=[real], real_weight=3.0,
        log=lambda _: None,
    )  # fmt: skip
    assert figures["real_samples"] == 1 and figures["real_weight"] == 3.0
    assert str(real) in SurfaceModel(out).metadata["data"]
    with pytest.raises(ValueError, match="expected 1 layer, got 3"):
        train_surface(rolls, tmp_path / "x.onnx", layers=3, real=[real], epochs=1)
    with pytest.raises(ValueError, match="expected a real_weight above 0, got 0"):
        train_surface(rolls, tmp_path / "x.onnx", real=[real], real_weight=0, epochs=1)


def test_cocked_die_model_trains_on_rendered_rolls(tmp_path):
    from vision.cocked import CockedModel
    from vision.train.cocked import train_cocked
    from vision.train.offtable import load_context_crops

    # seed 7, indices 2 to 4: a cocked die in each
    rolls = tmp_path / "rolls"
    write_dataset(rolls, 3, seed=7, start=2, size=(320, 240), val_fraction=0.0)
    x, y = load_context_crops([rolls], "train", positive="cocked", context=2.0, size=40)
    assert x.shape[1:] == (40, 40, 3) and len(x) == len(y) and 0 < y.sum() < len(y)
    out = tmp_path / "nested" / "cocked.onnx"
    figures = train_cocked([rolls], out, size=40, epochs=1, batch=8, log=lambda _: None)
    assert figures["train_dice"] == len(x) and figures["train_cocked"] == int(y.sum())
    model = CockedModel(out)
    assert model.metadata["task"] == "dicecam-cocked"
    assert (model.context, model.size, model.tta) == (2.0, 40, True)
    assert model.threshold == figures["threshold"] == 0.45
    assert model.threshold_alone == figures["threshold_alone"] == 0.65
    flags = model.flags(np.zeros((240, 320, 3), np.uint8), [(10, 10, 30, 30), (50, 50, 80, 90)])
    assert flags.shape == (2,) and flags.dtype == bool
    with pytest.raises(ValueError, match="expected dice both cocked and flat"):
        train_cocked([rolls], tmp_path / "x.onnx", limit=0, epochs=1)


def test_dice_aware_model_reads_where_the_dice_lie(rolls, tmp_path):
    from vision.table import TableStage
    from vision.types import Die, Reading

    out = tmp_path / "dice.onnx"
    figures = train_surface(
        rolls, out, input_size=64, epochs=1, batch=4, dice=True, log=lambda _: None
    )
    assert figures["dice"] == 1
    model = SurfaceModel(out)
    assert model.reads_dice and "reads_dice=True" in repr(model)
    photo = np.full((240, 320, 3), 128, np.uint8)
    alone = model.probability(photo)
    boxes = [(100.0, 100.0, 140.0, 140.0), (200.0, 60.0, 230.0, 90.0)]
    with_dice = model.probability(photo, boxes=boxes)
    assert alone.shape == with_dice.shape == (16, 16)
    assert not np.allclose(alone, with_dice)  # the dice map goes into the model
    # boxes are in pixels of the photo's true size when it was decoded smaller
    half = np.full((120, 160, 3), 128, np.uint8)
    assert np.allclose(model.probability(half, boxes=boxes, size=(320, 240)), with_dice, atol=0.05)
    # the reader's table step gives the model the dice it found
    reading = Reading(320, 240, [Die(3, b, 0.9) for b in boxes])
    TableStage(model).apply(reading, photo)
    assert reading.outline == model.outline(photo, (320, 240), boxes=boxes)


def test_real_photos_carry_their_dice_map(tmp_path):
    from vision.train.surface_data import load_real_surface

    images, _ = load_real_surface(_real_photos(tmp_path / "real"), size=100, dice=True)
    assert images.shape == (1, 100, 100, 4)
    where = images[0, ..., 3]
    # dice at x 0.25 and 0.75, y 0.5 (resting point a little below the centre)
    assert where[51, 25] == where[51, 75] == 255 and where[51, 50] == where[10, 10] == 0


def test_strong_photometric_jitter_makes_dim_grey_and_washed_out_photos():
    """The strong jitter (``--photometric strong``) shows the net the dim, grey and low-contrast
    photos on which the mild one's model drew edges that are not there; the targets stay."""
    from vision.train.surface_data import TABLE_IN_PLAY, augmented_batch

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (64, 96, 96, 3), dtype=np.uint8)
    codes = np.full((64, 96, 96), TABLE_IN_PLAY, np.uint8)
    mild = augmented_batch(np.random.default_rng(1), images, codes, 64)
    strong = augmented_batch(np.random.default_rng(1), images, codes, 64, photometric="strong")
    for x, y, known in (mild, strong):
        assert x.shape == (64, 3, 64, 64) and ((x >= 0) & (x <= 1)).all()
        assert np.allclose(y, 1) and np.allclose(known, 1)  # colour never moves the outline

    def grey(x):
        return np.abs(x - x.mean(axis=1, keepdims=True)).max(axis=(1, 2, 3)) < 1e-6

    def spread(x):
        return x.std(axis=(1, 2, 3))

    def level(x):
        return x.mean(axis=(1, 2, 3))

    assert not grey(mild[0]).any() and grey(strong[0]).sum() >= 3
    assert spread(strong[0]).min() < 0.6 * spread(mild[0]).min()  # washed out
    assert level(strong[0]).min() < level(mild[0]).min() - 0.05  # dimmer
    with pytest.raises(ValueError, match="photometric"):
        train_surface([], "x.onnx", photometric="harsh")


def test_edge_cells_mark_the_surface_edge_and_nothing_on_plain_or_framed_surfaces():
    from vision.train.surface_data import edge_cells

    t = np.zeros((3, 1, 8, 8), np.float32)
    t[0, 0, 2:6, 2:6] = 1  # a tray in the middle
    t[1] = 1  # the surface fills the frame: no edge, the frame's border is none
    t[2, 0, :, :4] = 0.5  # half-surface cells beside none: a step of 0.5, over the 0.25 spread
    e = edge_cells(t)
    assert e.shape == (3, 8, 8)
    ring = np.zeros((8, 8), bool)
    ring[1:7, 1:7] = True
    ring[3:5, 3:5] = False  # cells more than one cell from the edge, in and out
    assert np.array_equal(e[0].astype(bool), ring)
    assert e[1].sum() == 0
    assert e[2][:, 3:5].all() and e[2][:, :3].sum() == 0 and e[2][:, 5:].sum() == 0
    three = np.zeros((1, 3, 8, 8), np.float32)  # off, table, tray: the surface is table + tray
    three[0, 1, :, :4] = 1
    three[0, 2, :, 4:] = 1
    assert edge_cells(three).sum() == 0


def test_edge_weight_trains_and_goes_into_the_model(rolls, tmp_path):
    out = tmp_path / "edge.onnx"
    figures = train_surface(
        rolls, out, input_size=64, epochs=1, batch=4, edge_weight=4, log=lambda _: None
    )
    assert figures["edge_weight"] == 4
    assert SurfaceModel(out).metadata["edge_weight"] == "4"
    with pytest.raises(ValueError, match="edge_weight"):
        train_surface(rolls, tmp_path / "x.onnx", edge_weight=-1)


def test_an_outline_model_quantized_to_int8_keeps_its_metadata_and_reads_as_the_float_one(
    rolls, tmp_path, monkeypatch
):
    import cv2

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # quantizing leaves nothing in the working folder

    from vision.table.surface import squeeze
    from vision.train.quantize import is_int8, main, quantize_surface_model

    float_file = tmp_path / "float.onnx"
    train_surface(rolls[:1], float_file, input_size=64, epochs=2, batch=4, log=lambda _: None)
    out = quantize_surface_model(float_file, [rolls[0]], tmp_path / "int8.onnx")
    first = out.read_bytes()
    assert quantize_surface_model(float_file, [rolls[0]], out).read_bytes() == first  # again
    assert out.stat().st_size < float_file.stat().st_size
    f, q = SurfaceModel(float_file), SurfaceModel(out)
    assert is_int8(q.metadata) and not is_int8(f.metadata)
    assert {k: v for k, v in q.metadata.items() if k != "int8"} == f.metadata
    # photos it was not calibrated on: another model, whose grid stays close
    photos = sorted((rolls[1] / "images").rglob("*.jpg"))
    assert photos
    for photo in photos:
        rgb = np.ascontiguousarray(cv2.imread(str(photo))[:, :, ::-1])
        a, b = f.probability(rgb), q.probability(rgb)
        assert a.shape == b.shape and not np.array_equal(a, b)
        assert np.abs(a - b).max() < 0.1, np.abs(a - b).max()
    assert squeeze(rgb, (64, 64)).shape == (64, 64, 3)
    assert not list(cwd.iterdir())
    with pytest.raises(ValueError, match="already quantized"):
        quantize_surface_model(out, [rolls[0]], tmp_path / "twice.onnx")
    with pytest.raises(ValueError, match="cannot read it"):  # its torch weights are no ONNX file
        quantize_surface_model(float_file.with_suffix(".pt"), [rolls[0]], tmp_path / "x.onnx")
    die_model = Path(__file__).resolve().parents[2] / "models" / "dicecam-offtable.onnx"
    with pytest.raises(SystemExit):  # a die model is not an outline model: one line, no trace
        main([str(die_model), "--surface", str(tmp_path / "x.onnx"), "--data", str(rolls[0])])
