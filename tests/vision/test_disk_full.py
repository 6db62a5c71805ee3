"""A disk that fills (or a write that fails) part way through a long command: ``dicecam train``
(the detector's checkpoints, the face classifier's weights, the export), ``dicecam synth`` and
``dicecam label``. Each ends in one line naming the file that could not be written and why, exit
status 1, no traceback, and nothing cut left where a later run or the reader would take it for a
result; a rerun once there is room works.

The disk is simulated in the process: the lowest write the code uses (a file's ``write``,
``os.sendfile``, ``Path.write_bytes``, ``torch.save``) fails with ENOSPC or torch's RuntimeError
after writing part of its bytes, as a full disk does.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

import vision.atomic as atomic
from service.cli import main

from dicecam_testing.cli import SAMPLES
from dicecam_testing.disk import FULL, TINY, full_disk

TORCH_CUT = "[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534"
"""What torch.save raises when the file it writes to itself (a path) cannot take its bytes."""

needs_train = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)


def _one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("dicecam ")]
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"dicecam {command}: error: "), err
    return lines[0]


def _litter(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*"))


def test_a_copy_onto_a_full_disk_names_the_copy_not_its_source(tmp_path, monkeypatch):
    """shutil's copy names its source first: a model copied into a full --out said the shipped
    model itself had 'No space left on device'."""
    src = tmp_path / "shipped.onnx"
    src.write_bytes(b"the shipped model" * 100)
    dst = tmp_path / "out" / "copy.onnx"
    dst.parent.mkdir()
    dst.write_bytes(b"earlier copy")

    def sendfile(out_fd, in_fd, offset, count):
        raise OSError(errno.ENOSPC, FULL)

    monkeypatch.setattr(os, "sendfile", sendfile)
    with pytest.raises(OSError) as full:
        atomic.atomic_copy(src, dst)
    assert str(full.value) == f"[Errno {errno.ENOSPC}] {FULL}: {str(dst)!r}"
    assert dst.read_bytes() == b"earlier copy" and _litter(tmp_path) == []


def test_label_copying_photos_onto_a_full_disk_names_the_copy(tmp_path, monkeypatch, capsys):
    photos = tmp_path / "photos"
    photos.mkdir()
    for photo in SAMPLES[:2]:
        shutil.copyfile(photo, photos / photo.name)
    out = tmp_path / "labelled"

    def sendfile(out_fd, in_fd, offset, count):
        raise OSError(errno.ENOSPC, FULL)

    monkeypatch.setattr(os, "sendfile", sendfile)
    argv = ["label", str(photos), "--out", str(out), "--format", "yolo", "--no-progress"]
    assert main(argv) == 1
    line = _one_line(capsys, "label")
    assert line.startswith(f"dicecam label: error: {FULL}: {out}/images/train/"), line
    assert line.endswith(f" (--out {out} was not made; nothing was left behind)"), line
    name = line.removeprefix(f"dicecam label: error: {FULL}: {out}/images/train/").split(" ")[0]
    assert name in {p.name for p in SAMPLES[:2]} and str(photos) not in line
    assert not out.exists() and _litter(tmp_path) == []  # no half-labelled --out
    monkeypatch.undo()
    assert main(argv) == 0
    assert sorted(p.name for p in (out / "images" / "train").iterdir()) == sorted(
        p.name for p in SAMPLES[:2]
    )


def test_synth_preview_on_a_full_disk_is_one_line_and_no_half_sheet(tmp_path, monkeypatch, capsys):
    """cv2.imwrite's libpng wrote 'libpng error: Write Error' and dicecam called a full disk
    a usage error (exit 2, 'could not write'), leaving what it had written of the sheet."""
    sheet = tmp_path / "sheet.png"
    full_disk(monkeypatch, tmp_path, room=1000)
    argv = ["synth", "--preview", str(sheet), "--n", "1", "--size", "128", "128", "--tile", "64"]
    assert main(argv) == 1
    assert _one_line(capsys, "synth") == f"dicecam synth: error: {FULL}: {sheet}"
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert main(argv) == 0 and sheet.read_bytes().startswith(b"\x89PNG")


def test_synth_on_a_full_disk_leaves_whole_photos_with_labels_and_says_how_to_go_on(
    tmp_path, monkeypatch, capsys
):
    from PIL import Image

    out = tmp_path / "set"
    full_disk(monkeypatch, tmp_path, room=20_000)  # a photo or two at 256x256
    argv = ["synth", "--out", str(out), "--n", "6", "--size", "256", "256", "--quiet"]
    assert main(argv) == 1
    line = _one_line(capsys, "synth")
    assert line.startswith(f"dicecam synth: error: {FULL}: {out}/"), line
    photos = sorted((out / "images" / "train").glob("*.jpg"))
    assert len(photos) < 6 and _litter(out) == []
    for photo in photos:
        with Image.open(photo) as im:
            im.load()  # whole
        assert (out / "labels" / "train" / f"{photo.stem}.txt").is_file()
    monkeypatch.undo()
    assert main(argv) == 0 and len(list((out / "images" / "train").glob("*.jpg"))) == 6
    with pytest.raises(SystemExit):
        main(["synth", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "A run stopped part way (Ctrl-C, a full disk) leaves the images written so far" in said


@needs_train
def test_face_weights_on_a_full_disk_name_the_file_and_keep_the_earlier_ones(tmp_path, monkeypatch):
    """torch.save raised its own RuntimeError ('unexpected pos'): a traceback, not one line."""
    from vision.train.classifier import FaceNet, load_classifier, save_classifier

    weights = save_classifier(FaceNet(1.0, 7), tmp_path / "m-faces.pt")
    before = weights.read_bytes()
    full_disk(monkeypatch, tmp_path, room=4096)
    with pytest.raises(OSError) as full:
        save_classifier(FaceNet(1.0, 7), weights)
    assert str(full.value) == f"[Errno {errno.ENOSPC}] {FULL}: {str(weights)!r}"
    monkeypatch.undo()
    assert weights.read_bytes() == before and _litter(tmp_path) == []
    load_classifier(weights)


@pytest.mark.parametrize(("free", "says"), [(0, FULL), (10**9, "Input/output error (")])
def test_torch_writing_a_path_that_fails_is_said_by_what_the_disk_holds(
    tmp_path, monkeypatch, free, says
):
    """torch.save given a path writes it itself and says only 'unexpected pos' (ultralytics'
    final checkpoints, the detector soup): a full disk is ENOSPC, else an I/O error with
    torch's words, named by the file either way."""
    monkeypatch.setattr(atomic, "_free_bytes", lambda path: free, raising=False)
    target = tmp_path / "soup.pt"
    with pytest.raises(OSError) as failed, atomic.replacing(target) as part:
        part.write_bytes(b"half a checkpoint")
        raise RuntimeError(TORCH_CUT)
    assert failed.value.filename == str(target) and failed.value.strerror.startswith(says)
    assert failed.value.errno == (errno.ENOSPC if free == 0 else errno.EIO)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError, match="mat1 and mat2"), atomic.replacing(target):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")  # not a write's


def _fail_checkpoint(monkeypatch, how: str) -> None:
    """ultralytics' checkpoint writes on a full disk: its ``last.pt`` each epoch through
    ``Path.write_bytes`` (ENOSPC, no file named), or its final ``last.pt`` through torch.save of
    a path (RuntimeError); each leaves half the file."""
    import torch

    if how == "write_bytes":
        real = Path.write_bytes

        def write_bytes(self: Path, data: bytes) -> int:
            if self.suffix != ".pt":
                return real(self, data)
            real(self, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, FULL)

        monkeypatch.setattr(Path, "write_bytes", write_bytes)
        return
    real_save = torch.save

    def save(obj, f, *args, **kwargs):
        if not isinstance(f, str | os.PathLike):
            return real_save(obj, f, *args, **kwargs)
        Path(f).write_bytes(b"PK\x03\x04 half a checkpoint")
        raise RuntimeError(TORCH_CUT)

    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(atomic, "_free_bytes", lambda path: 0, raising=False)


@needs_train
@pytest.mark.slow
@pytest.mark.parametrize("how", ["write_bytes", "torch.save"])
def test_a_full_disk_while_the_detector_trains_is_one_line(tmp_path, monkeypatch, capsys, how):
    """The known leftover: ultralytics' checkpoint on a full disk ended in torch's RuntimeError
    traceback, or in 'No space left on device' naming no file, and left the cut last.pt where
    --soup or --init would take it for weights."""
    from vision.train.env import prepare_ultralytics
    from vision.train.recipe import REPO

    prepare_ultralytics()
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY.format(model=REPO / "datasets" / "recipes" / "yolo11-dice.yaml"))
    work, out = tmp_path / "work", tmp_path / "out"
    argv = ["train", "--recipe", str(recipe), "--work", str(work), "--out", str(out)]
    argv += ["--stage", "detector"]
    _fail_checkpoint(monkeypatch, how)
    assert main(argv) == 1
    weights = work / "detector" / "train" / "weights"
    assert _one_line(capsys, "train") == (
        f"dicecam train: error: {FULL}: {weights / 'last.pt'}; {out} left as it was "
        "(no file of this run there)"
    )
    assert list(weights.glob("*.pt")) in ([], [weights / "best.pt"])  # nothing cut left
    assert not out.exists()
    if how == "torch.save":
        monkeypatch.undo()
        assert main(argv) == 0
        assert (out / "tiny.onnx").is_file() and (out / "tiny.pt").is_file()
