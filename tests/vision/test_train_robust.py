"""A player's mistakes with `dicecam train --from` and with choosing a model to read with: bad
photos, a bad starting model, a run stopped, an output folder in the way, and a model setting
that names something the reader cannot use. Each is one line and a nonzero exit, and nothing
is left where a later run or the reader would take it for a model."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import main

from dicecam_testing.cli import ROOT, SAMPLES
from dicecam_testing.folders import yolo_folder

MODELS = ROOT / "models"


@pytest.fixture
def bad_models(tmp_path: Path) -> dict[str, Path]:
    """Paths a player may point a model setting at, none a reader model."""
    corrupt = tmp_path / "cut.onnx"
    corrupt.write_bytes((MODELS / "dicecam-reader.onnx").read_bytes()[:2000])
    empty = tmp_path / "empty"
    empty.mkdir()
    return {
        "folder": empty,
        "models folder": MODELS,
        "checkpoint": MODELS / "dicecam-reader.pt",
        "corrupt": corrupt,
        "outline model": MODELS / "dicecam-surface.onnx",
    }


@pytest.mark.parametrize(
    ("which", "says"),
    [
        ("folder", "(a folder with no .onnx in it)"),
        # the detectors in it, not the second-stage models beside them
        ("models folder", "(a folder; it holds dicecam-offtable.onnx, dicecam-reader.onnx, dic"),
        (
            "checkpoint",
            "(a PyTorch checkpoint, for training, not its ONNX export: dicecam-reader.onnx beside",
        ),
        ("corrupt", "(expected an ONNX export of a dice detector; truncated or corrupt?)"),
        ("outline model", "expected one class per face 1 to 6"),
    ],
)
def test_read_and_eval_say_which_setting_named_a_model_they_cannot_use(
    which, says, bad_models, monkeypatch, capsys
):
    """A folder was 'not found', a .pt or a cut file gave the runtime's message over several
    lines (a .pt under OpenVINO also TensorFlow's log), and none said which setting named it."""
    model = bad_models[which]
    assert main(["read", "--model", str(model), "--backend", "onnxruntime", str(SAMPLES[0])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicecam read: error: ") and says in err, err
    assert err.rstrip().endswith("(named by --model)") and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("DICECAM_MODEL", str(model))
    assert main(["eval", str(ROOT / "datasets" / "samples"), "--backend", "onnxruntime"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicecam eval: error: ") and says in err, err
    assert err.rstrip().endswith("(named by DICECAM_MODEL)") and len(err.strip().splitlines()) == 1


def _serve(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "service.cli", "serve", "--port", "0", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=40,
            env={**os.environ, "DICECAM_DATA_DIR": str(tmp_path / "data"), **env},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("dicecam serve started with a model it cannot read")


def test_serve_refuses_a_model_it_cannot_read_at_start(tmp_path, bad_models):
    """It checked only that the file was there: the outline model, a cut file or a checkpoint
    served 'ok' until the first photo's 503."""
    proc = _serve(tmp_path, "--model", str(bad_models["outline model"]))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("dicecam serve: error: --model must be the reader's ONNX export")
    assert "expected one class per face" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = _serve(tmp_path, DICECAM_MODEL=str(bad_models["corrupt"]))
    assert proc.returncode == 2, proc.stderr
    assert "DICECAM_MODEL must be the reader's ONNX export, got " in proc.stderr
    assert "truncated or corrupt?" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


needs_train = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)


def _train(start: Path, data: Path, tmp_path: Path) -> list[str]:
    out, work = tmp_path / "out", tmp_path / "work"
    return [
        "train",
        "--from",
        str(start),
        "--data",
        str(data),
        "--out",
        str(out),
        "--work",
        str(work),
    ]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("dicecam train: error: ") and len(err.strip().splitlines()) == 1, err
    return err


@needs_train
def test_data_whose_classes_are_named_otherwise_or_whose_photos_are_not_photos_is_refused(
    tmp_path, capsys
):
    """A data.yaml naming its classes 'die', or the faces in another order, was trained by
    class number (every die learned as face 1, or 6 as 1); photos that were not images went
    through the split and the evaluations to a ZeroDivisionError 45 s later."""
    data = yolo_folder(tmp_path / "data", ["a", "b", "c"])  # the photos are not JPEGs
    start = MODELS / "dicecam-reader.pt"
    for names, got in (
        (["die"], "got 0: 'die';"),
        (["6", "5", "4", "3", "2", "1"], "got 0: '6', 1: '5', 2: '4', 3: '3', 4: '2', 5: '1';"),
    ):
        (data / "data.yaml").write_text(f"train: images\nval: images\nnames: {names}\n")
        assert main(_train(start, data, tmp_path)) == 2
        err = _one_line(capsys)
        assert "expected its data.yaml to name class 0 '1' to class 5 '6'" in err and got in err
        assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()
    (data / "data.yaml").write_text(
        "names: {0: '1', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6', 6: cocked}\n"
    )
    assert main(_train(start, data, tmp_path)) == 2
    err = _one_line(capsys)
    assert "--data: expected photos training can read, got 3 it cannot: not an image" in err
    assert str(data / "images" / "a.jpg") in err  # the player's photo, not the split's link
    assert not (tmp_path / "out").exists()


@pytest.fixture
def starts(tmp_path: Path) -> dict[str, Path]:
    """Starting models fine-tuning cannot start from."""

    def model(name: str, pt: bytes, faces_pt: bytes | None = None) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        for suffix in (".onnx", "-faces.onnx"):
            (folder / f"m{suffix}").write_bytes((MODELS / f"dicecam-reader{suffix}").read_bytes())
        (folder / "m.pt").write_bytes(pt)
        if faces_pt is not None:
            (folder / "m-faces.pt").write_bytes(faces_pt)
        return folder / "m.onnx"

    detector = (MODELS / "dicecam-reader.pt").read_bytes()
    (tmp_path / "empty").mkdir()
    return {
        "folder": tmp_path / "empty",
        "models": MODELS,
        "cut": model("cut", detector[:20000]),
        "classifier": model("classifier", (MODELS / "dicecam-reader-faces.pt").read_bytes()),
        "faces": model("faces", detector, faces_pt=detector),
        "offtable": MODELS / "dicecam-offtable.pt",
    }


@needs_train
@pytest.mark.parametrize(
    ("which", "says"),
    [
        ("folder", "--from needs a model, NAME.onnx, got the folder "),
        ("models", "(it holds dicecam-offtable.onnx, dicecam-reader-cocked.onnx, "),
        ("cut", "cannot load its detector checkpoint "),
        ("classifier", "expected m.pt to be a YOLO detector checkpoint (ultralytics), got keys "),
        ("faces", "cannot load its face classifier's weights "),
        ("offtable", "expected a dice reader to fine-tune: "),
    ],
)
def test_a_starting_model_fine_tuning_cannot_start_from_is_refused(
    which, says, starts, tmp_path, capsys
):
    """A cut .pt, a classifier's weights as the detector's or the off-table model went through
    the split and the evaluations before training failed with a traceback."""
    data = yolo_folder(tmp_path / "data", ["a", "b", "c"])
    assert main(_train(starts[which], data, tmp_path)) == 2
    assert says in _one_line(capsys)
    assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()


@needs_train
def test_an_out_folder_the_model_cannot_go_into_is_refused_before_training(tmp_path, capsys):
    """A file where --out (or a folder above it) should be stopped the run only at its end,
    minutes of training lost, with a FileExistsError traceback."""
    data = yolo_folder(tmp_path / "data", ["a", "b", "c"])
    blocker = tmp_path / "out"
    blocker.write_text("my notes")
    for out in (blocker, blocker / "ft"):
        argv = _train(MODELS / "dicecam-reader.pt", data, tmp_path)
        argv[argv.index("--out") + 1] = str(out)
        assert main(argv) == 2
        assert (
            f"--out: expected a folder to put the model into, got {out} ({blocker} is a file)"
            in (_one_line(capsys))
        )
    assert blocker.read_text() == "my notes" and not (tmp_path / "work").exists()
