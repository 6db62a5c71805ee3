"""Joined outline models (:mod:`vision.train.surface_join`): one ONNX file whose grid is the mean
of its members' grids, run by :class:`vision.table.SurfaceModel` as one model."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the train extra (torch)")
onnx = pytest.importorskip("onnx", reason="the train extra (onnx)")

from vision.table import SurfaceModel  # noqa: E402
from vision.train.surface_join import join_surface_models, main  # noqa: E402
from vision.train.surface_net import build_net, export_surface  # noqa: E402


def _member(path, seed, *, layers=1, min_certainty=0.4, input_size=64, iou="0.8"):
    torch.manual_seed(seed)
    net = build_net(layers, 0.5)
    with torch.no_grad():  # trained nets' norms are not the fresh ones' 0 and 1
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
    meta = {"min_certainty": min_certainty, "layers": layers, "val_mean_iou": iou}
    return export_surface(net, path, meta, input_size=input_size)


def _run(path, x):
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"image": x})[0]


def test_the_joined_grid_is_the_mean_of_the_members_grids(tmp_path):
    members = [_member(tmp_path / f"m{k}.onnx", k, iou=f"0.8{k}") for k in range(3)]
    out = join_surface_models(members, tmp_path / "joined" / "surface.onnx")
    x = np.random.default_rng(0).random((2, 3, 64, 64), np.float32)
    grids = [_run(m, x) for m in members]
    assert not np.allclose(grids[0], grids[1], atol=1e-3)  # the members differ
    np.testing.assert_allclose(_run(out, x), np.mean(grids, axis=0), atol=1e-5)
    meta = {e.key: e.value for e in onnx.load(str(out)).metadata_props}
    assert meta["task"] == "dicecam-surface" and meta["min_certainty"] == "0.4"
    assert meta["members"] == ", ".join(str(m) for m in members)
    assert meta["val_mean_iou"] == "0.80, 0.81, 0.82"


def test_the_runtime_reads_a_joined_model_as_one(tmp_path):
    members = [_member(tmp_path / f"m{k}.onnx", k) for k in range(2)]
    out = join_surface_models(members, tmp_path / "joined.onnx")
    model = SurfaceModel(out)
    assert model.imgsz == (64, 64) and model.layers == 1 and model.min_certainty == 0.4
    rgb = np.random.default_rng(1).integers(0, 256, (48, 64, 3), np.uint8)
    expected = np.mean([SurfaceModel(m).probability(rgb) for m in members], axis=0)
    np.testing.assert_allclose(model.probability(rgb), expected, atol=1e-5)


def test_members_that_do_not_match_are_refused_naming_what_differs(tmp_path):
    a = _member(tmp_path / "a.onnx", 0)
    other_gate = _member(tmp_path / "b.onnx", 1, min_certainty=0.3)
    with pytest.raises(ValueError, match=r"b\.onnx: expected the same min_certainty .*0\.4.*0\.3"):
        join_surface_models([a, other_gate], tmp_path / "j.onnx")
    three = _member(tmp_path / "c.onnx", 2, layers=3)
    with pytest.raises(ValueError, match=r"c\.onnx: expected the same layers"):
        join_surface_models([a, three], tmp_path / "j.onnx")
    bigger = _member(tmp_path / "d.onnx", 3, input_size=96)
    with pytest.raises(ValueError, match=r"d\.onnx: expected the same imgsz"):
        join_surface_models([a, bigger], tmp_path / "j.onnx")
    assert not (tmp_path / "j.onnx").exists()


def test_what_is_not_an_outline_model_is_refused(tmp_path):
    a = _member(tmp_path / "a.onnx", 0)
    with pytest.raises(ValueError, match="at least two outline models to join, got 1"):
        join_surface_models([a], tmp_path / "j.onnx")
    with pytest.raises(FileNotFoundError, match=r"nope\.onnx: expected an outline model"):
        join_surface_models([a, tmp_path / "nope.onnx"], tmp_path / "j.onnx")
    text = tmp_path / "notes.onnx"
    text.write_text("not a model\n")
    with pytest.raises(ValueError, match=r"notes\.onnx: expected an outline model \(\.onnx\)"):
        join_surface_models([a, text], tmp_path / "j.onnx")
    model = onnx.load(str(a))
    for entry in model.metadata_props:
        if entry.key == "task":
            entry.value = "dicecam-offtable"
    onnx.save(model, str(tmp_path / "offtable.onnx"))
    with pytest.raises(ValueError, match="got task 'dicecam-offtable'"):
        join_surface_models([a, tmp_path / "offtable.onnx"], tmp_path / "j.onnx")
    assert not (tmp_path / "j.onnx").exists()


def test_the_command_joins_or_says_why_not(tmp_path, capsys):
    members = [str(_member(tmp_path / f"m{k}.onnx", k)) for k in range(2)]
    assert main([*members, "--out", str(tmp_path / "j.onnx")]) == 0
    assert "the mean of 2 outline models" in capsys.readouterr().out
    assert SurfaceModel(tmp_path / "j.onnx").layers == 1
    assert main([members[0], "--out", str(tmp_path / "k.onnx")]) == 2
    assert "error: expected at least two outline models" in capsys.readouterr().err
    assert not (tmp_path / "k.onnx").exists()
