"""Edges of putting a fine-tuned model into ``--out`` that mutation testing found untested: a
stage without the detector is refused before ``--out`` is touched, and every kind of file the
earlier model had and the new one has not (a sidecar .json, a cocked-die checkpoint) goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.train.publish import publish, said


def _files(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def _held(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


EARLIER = {"m.onnx": b"earlier detector", "m-faces.onnx": b"earlier faces", "m.md": b"card"}


def test_a_stage_without_the_detector_is_refused_and_out_keeps_the_earlier_model(tmp_path):
    """Companions without their detector are no model: publishing them took the earlier
    detector out and left --out with no model and another run's face classifier."""
    out = _files(tmp_path / "out", EARLIER)
    stage = _files(tmp_path / "stage", {"m-faces.onnx": b"new faces", "m.md": b"new card"})
    with pytest.raises(FileNotFoundError, match=r"expected the fine-tuned model .*stage/m\.onnx"):
        publish(stage, out, "m")
    assert _held(out) == EARLIER
    assert _held(stage) == {"m-faces.onnx": b"new faces", "m.md": b"new card"}


def test_each_kind_of_earlier_file_the_new_model_has_none_of_goes(tmp_path):
    earlier = {**EARLIER, "m.json": b"{}", "m-cocked.pt": b"cocked", "m-verify.md": b"check card"}
    out = _files(tmp_path / "out", {**earlier, "m2.json": b"another model's"})
    new = {"m.onnx": b"new detector", "m-faces.onnx": b"new faces"}
    publish(_files(tmp_path / "stage", new), out, "m")
    assert _held(out) == {**new, "m2.json": b"another model's"}


def test_a_library_oserror_without_errno_keeps_its_words_in_the_line_said():
    """A library's ``OSError("disk full")`` has no errno: said as '[Errno None] None; ...'."""
    told = said(OSError("disk full"), "out left as it was")
    assert isinstance(told, OSError) and str(told) == "disk full; out left as it was"
