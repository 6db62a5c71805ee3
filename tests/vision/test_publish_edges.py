"""Edges of putting a fine-tuned model into ``--out`` that mutation testing found untested: a
stage without the detector is refused before ``--out`` is touched, and every kind of file the
earlier model had and the new one has not (a sidecar .json, a cocked-die checkpoint) goes."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

import vision.train.publish as publish_module
from vision.atomic import replace_file
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


def _stage_on(monkeypatch, failure: int) -> None:
    """Moving a file out of the folder ``stage`` fails with errno ``failure``."""

    def move(src, dst) -> None:
        if Path(src).parent.name == "stage":
            raise OSError(failure, "from the stage", str(src))
        replace_file(src, dst)

    monkeypatch.setattr(publish_module, "replace_file", move)


def test_from_another_disk_each_file_is_copied_then_removed_from_the_stage(tmp_path, monkeypatch):
    _stage_on(monkeypatch, errno.EXDEV)
    out = _files(tmp_path / "out", EARLIER)
    new = {"m.onnx": b"new detector", "m-faces.onnx": b"new faces"}
    stage = _files(tmp_path / "stage", new)
    publish(stage, out, "m")
    assert _held(out) == new and _held(stage) == {}  # moved, not left twice


def test_a_move_refused_for_another_reason_is_not_taken_for_another_disk(tmp_path, monkeypatch):
    """Only EXDEV means another disk: a permission refused is said, not copied past."""
    _stage_on(monkeypatch, errno.EACCES)
    out = _files(tmp_path / "out", EARLIER)
    with pytest.raises(OSError) as refused:
        publish(_files(tmp_path / "stage", {"m.onnx": b"new detector"}), out, "m")
    assert refused.value.errno == errno.EACCES and "left as it was" in str(refused.value)
    assert _held(out) == EARLIER


def test_stopped_with_no_earlier_model_out_is_said_to_be_left_as_it_was(tmp_path, monkeypatch):
    """No earlier model was taken out: out holds what it held, not "no model now"."""
    out = _files(tmp_path / "out", {"other.onnx": b"another model"})
    stage = _files(tmp_path / "stage", {"m.onnx": b"new detector", "m-faces.onnx": b"new"})
    calls = [0]

    def replace(src, dst) -> None:  # the first file put into out fails
        calls[0] += 1
        if calls[0] == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        replace_file(src, dst)

    monkeypatch.setattr(publish_module, "replace_file", replace)
    with pytest.raises(OSError) as err:
        publish(stage, out, "m")
    assert str(err.value).endswith(
        f"; {out} left as it was (no model of this run there); the same command starts again"
    )
    assert _held(out) == {"other.onnx": b"another model"}


def test_the_model_path_is_absolute_whatever_the_working_folder(tmp_path, monkeypatch):
    from vision.train.publish import fine_tuned_model

    monkeypatch.chdir(tmp_path)
    assert fine_tuned_model(Path("m.onnx"), None, None) == tmp_path / "runs/finetune/m-ft.onnx"
    assert fine_tuned_model(Path("a/m.onnx"), Path("out"), "x") == tmp_path / "out" / "x.onnx"


def test_a_link_named_as_a_publish_folder_is_not_taken_for_a_stale_one(tmp_path):
    from vision.train.publish import stale_folders

    out = tmp_path / "out"
    (out / ".m.publish").mkdir(parents=True)  # an old shared folder: stale
    (tmp_path / "elsewhere").mkdir()
    (out / ".n.publish").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (out / ".m.publish.txt").write_text("not a folder of a publish")
    assert stale_folders(out, "m") == [out / ".m.publish"]
    assert stale_folders(out, "n") == []
    assert stale_folders(tmp_path / "absent", "m") == []
