"""A player's mistakes with `dicecam train --from` and with choosing a model to read with: bad
photos, a bad starting model, a run stopped, an output folder in the way, and a model setting
that names something the reader cannot use. Each is one line and a nonzero exit, and nothing
is left where a later run or the reader would take it for a model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import main

from dicecam_testing.cli import ROOT, SAMPLES

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
        ("folder", "is a folder, with no .onnx in it"),
        ("models folder", "it holds dicecam-offtable.onnx, dicecam-reader.onnx"),
        ("checkpoint", "is a PyTorch checkpoint (.pt, for training), not an ONNX export"),
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
