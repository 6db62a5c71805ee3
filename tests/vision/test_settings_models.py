"""The reader's and the table step's model and size settings: a ``DICECAM_IMGSZ`` the detector
cannot read at, and a ``DICECAM_*_MODEL`` that names no file it can read, stop every command
that reads them (``dicecam read``, ``eval``, ``label``, ``serve``) in one line naming the
variable (or the flag), what was expected and what came, exit 2. A learned outline or off-table
model named and not there is refused, not left out silently; ``none`` turns it off, and without
the variable a missing shipped model (a trimmed install) is still left out quietly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service.cli import main
from vision.reader import DiceReader

from dicecam_testing import onnx_models as models
from dicecam_testing.cli import ROOT, SAMPLES

PHOTO = str(SAMPLES[0])


@pytest.fixture
def no_server(monkeypatch):
    """A command that took every setting would serve for good: it fails the test instead."""
    import uvicorn

    def served(*args, **kwargs):
        raise AssertionError("the command started serving with a setting it should refuse")

    monkeypatch.setattr(uvicorn, "run", served)


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    """What a player may point a model variable at by mistake."""
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    return {
        "missing": str(tmp_path / "gone.onnx"),
        "folder": str(folder),
        "fifo": str(fifo),
        "empty": "",
        "junk": str(junk),
        "checkpoint": str(ROOT / "models" / "dicecam-reader-faces.pt"),  # the ONNX's torch twin
    }


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    return {
        "read": ["read", "--backend", "onnxruntime", PHOTO],
        "eval": ["eval", str(ROOT / "datasets" / "samples"), "--backend", "onnxruntime"],
        "label": ["label", str(ROOT / "datasets" / "samples"), "--out", str(tmp_path / "out")],
        "serve": ["serve"],
    }


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("command", ["read", "eval", "label", "serve"])
@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        # not on the stride: 'expected imgsz to be a multiple ...' named no variable, and
        # dicecam serve took it (every photo 503)
        ("DICECAM_IMGSZ", "100", "expected an input size that is a multiple of the model's"),
        ("DICECAM_IMGSZ", "0", "Input should be greater than or equal to 32"),
        ("DICECAM_IMGSZ", "big", "Input should be a valid integer"),
        # 'face classifier not found: ...' named no variable; serve took it
        ("DICECAM_FACES_MODEL", "missing", "expected the face classifier (an ONNX file), got"),
        ("DICECAM_VERIFY_MODEL", "folder", "expected the die check (an ONNX file), got"),
        ("DICECAM_COCKED_MODEL", "fifo", "expected the cocked-die model (an ONNX file), got"),
        ("DICECAM_FACES_MODEL", "empty", "expected the face classifier (an ONNX file), got"),
        # a .pt was refused as such for the reader's model only: here 'cannot load' at a photo
        ("DICECAM_FACES_MODEL", "checkpoint", "(a PyTorch checkpoint, for training, not its"),
        # named and missing: the learned outline or the off-table model was left out silently
        ("DICECAM_SURFACE_MODEL", "missing", "expected the outline model (an ONNX file), or"),
        ("DICECAM_OFFTABLE_MODEL", "folder", "or none for no off-table die model, got"),
    ],
)
def test_a_model_or_size_variable_it_cannot_use_is_one_line_naming_it(
    command, name, value, says, paths, tmp_path, monkeypatch, capsys, no_server
):
    value = paths.get(value, value)
    monkeypatch.setenv("DICECAM_PORT", "0")
    monkeypatch.setenv(name, value)
    assert main(_commands(tmp_path)[command]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"dicecam {command}: error: {name}: "), line
    assert says in line and repr(value) in line, line
    assert not (tmp_path / "out").exists()  # dicecam label wrote nothing


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("DICECAM_FACES_MODEL", "cannot load face classifier"),
        ("DICECAM_COCKED_MODEL", "cannot load cocked-die model"),
        ("DICECAM_VERIFY_MODEL", "cannot load die check"),
        ("DICECAM_SURFACE_MODEL", "table step: cannot load surface model"),
        ("DICECAM_OFFTABLE_MODEL", "table step: cannot load off-table model"),
    ],
)
def test_a_model_file_that_does_not_load_names_the_variable(name, says, paths, monkeypatch, capsys):
    """The runtime's message, once (it came twice for the cocked-die model), and the variable
    that named the file, as for DICECAM_MODEL."""
    monkeypatch.setenv(name, paths["junk"])
    assert main(["read", "--backend", "onnxruntime", PHOTO]) == 2
    line = _one_line(capsys)
    assert says in line and line.endswith(f"(named by {name})"), line
    assert line.count("cannot load") == 1, line


@pytest.mark.parametrize("command", ["read", "eval"])
def test_imgsz_off_the_stride_names_the_flag(command, tmp_path, capsys):
    assert main([*_commands(tmp_path)[command], "--imgsz", "100"]) == 2
    line = _one_line(capsys)
    assert line == (
        f"dicecam {command}: error: --imgsz: expected an input size that is a multiple of the "
        "model's stride 32, got 100"
    )


def test_the_reader_names_dicecam_imgsz_a_model_cannot_read_at(tmp_path, monkeypatch):
    """A size on the stride that a model with a fixed input cannot take: the setting is named,
    an argument is not (the caller gave it)."""
    fixed = models.make_model(
        tmp_path / "fixed.onnx", models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    )
    with pytest.raises(ValueError, match=r"^[^D]*fixed 320x320 input.*got imgsz 640"):
        DiceReader(fixed, faces=False, table=None, imgsz=640)
    monkeypatch.setenv("DICECAM_IMGSZ", "640")
    with pytest.raises(ValueError, match=r"^DICECAM_IMGSZ: .*fixed 320x320 input.*got imgsz 640"):
        DiceReader(fixed, faces=False, table=None)


def _outline_source(capsys) -> str | None:
    assert main(["read", "--json", "--backend", "onnxruntime", PHOTO]) == 0
    return json.loads(capsys.readouterr().out)["outline_source"]


def test_none_turns_a_learned_model_off_and_a_missing_shipped_one_is_left_out_quietly(
    tmp_path, monkeypatch, capsys
):
    from vision.table import logic

    if not logic.DEFAULT_SURFACE_MODEL.is_file():
        pytest.skip(f"no shipped outline model at {logic.DEFAULT_SURFACE_MODEL}")
    assert _outline_source(capsys) == "learned"
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "none")
    assert _outline_source(capsys) is None
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "None")
    assert logic.learned_outline() is None
    monkeypatch.setenv("DICECAM_OFFTABLE_MODEL", "none")
    monkeypatch.delenv("DICECAM_SURFACE_MODEL")
    assert logic.learned_offtable() is None and logic.learned_outline() is not None
    monkeypatch.delenv("DICECAM_OFFTABLE_MODEL")
    # a trimmed install: the shipped models absent, no variable set
    monkeypatch.setattr(logic, "DEFAULT_SURFACE_MODEL", tmp_path / "dicecam-surface.onnx")
    monkeypatch.setattr(logic, "DEFAULT_OFFTABLE_MODEL", tmp_path / "dicecam-offtable.onnx")
    assert logic.learned_outline() is None and logic.learned_offtable() is None
    assert _outline_source(capsys) is None
