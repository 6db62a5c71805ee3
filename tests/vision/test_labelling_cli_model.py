"""`dicecam label` in its own process with the real reader on a tiny ONNX detector with known
outputs: Label Studio and YOLO output, a dice count each photo is fitted to, an iPhone HEIC
written as an upright JPEG that training takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import read_labels

REPO = Path(__file__).resolve().parents[2]


def _fake_models_module():
    """Tiny ONNX detectors with known outputs (``dicecam_testing.onnx_models``)."""
    pytest.importorskip("onnx", reason="the onnx package builds the test model")
    from dicecam_testing import onnx_models

    return onnx_models


def _known_model_and_photos(tmp_path: Path, sizes: dict[str, tuple[int, int]]):
    """A detector that finds a 5 (at 0.9) and a 1 (at 0.6) in any photo, and plain photos."""
    fake = _fake_models_module()
    preds = fake.raw_preds([(160, 160, 40, 40, {4: 0.9}), (60, 200, 30, 30, {0: 0.6})])
    model = fake.make_model(tmp_path / "known.onnx", preds)
    photos = tmp_path / "photos"
    photos.mkdir()
    for name, size in sizes.items():
        Image.new("RGB", size, (90, 90, 90)).save(photos / name)
    return model, photos


def _label_cli(photos: Path, out: Path, fmt: str, model: Path) -> subprocess.CompletedProcess:
    """`dicecam label` in its own process, on the known model at a confidence of 0.5."""
    cmd = [sys.executable, "-m", "service.cli", "label", str(photos), "--out", str(out)]
    cmd += ["--format", fmt, "--model", str(model), "--conf", "0.5"]
    # the fake detector finds its boxes in any image, mirror images too: one look
    env = {**os.environ, "DICECAM_MIRROR": "0"}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120, env=env)


def test_cli_label_with_the_real_reader_on_a_known_model(tmp_path):
    """`dicecam label` end to end: real DiceReader, real ONNX session, real files and CLI."""
    model, photos = _known_model_and_photos(tmp_path, {"a.jpg": (640, 480), "b.png": (400, 400)})
    (photos / "broken.jpg").write_bytes(b"\xff\xd8\xff garbage")
    out = tmp_path / "out"
    proc = _label_cli(photos, out, "labelstudio", model)
    assert proc.returncode == 1, proc.stderr  # broken.jpg: labelled all the same
    assert "labelled 2 of 3 photos (4 dice)" in proc.stdout
    assert "ETA" in proc.stderr  # the progress bar
    assert (out / "unreadable.txt").read_text().startswith("broken.jpg\t")
    tasks = json.loads((out / "tasks.json").read_text())
    assert tasks[0]["predictions"][0]["model_version"] == "known"
    from vision.reader import DiceReader

    reader = DiceReader(model, conf=0.5, mirror=False)
    back = {p.name: p for p in read_labels(out, image_root=photos)}
    for name in ("a.jpg", "b.png"):
        direct = reader.read(photos / name)
        got = back[name]
        assert (got.width, got.height) == (direct.width, direct.height)
        assert sorted(d.value for d in got.dice) == [1, 5]
        for a, b in zip(got.dice, direct.dice, strict=True):
            assert a.value == b.value and a.confidence == pytest.approx(b.confidence, abs=1e-4)
            assert max(abs(x - y) for x, y in zip(a.box, b.box, strict=True)) <= 0.5


def test_cli_label_expect_fits_each_photo_to_the_dice_count(tmp_path):
    model, photos = _known_model_and_photos(tmp_path, {"a.jpg": (400, 400), "b.png": (400, 400)})

    def label(expect: str, out: Path) -> tuple[str, dict, dict]:
        cmd = [sys.executable, "-m", "service.cli", "label", str(photos), "--out", str(out)]
        cmd += ["--format", "yolo", "--model", str(model), "--expect", expect, "--no-progress"]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads((out / "summary.json").read_text())
        return proc.stdout, summary, {p.name: p for p in read_labels(out, image_root=photos)}

    # told one die: the likelier one, the 5, is kept on each photo
    printed, summary, back = label("1", tmp_path / "one")
    assert "labelled 2 of 2 photos (2 dice)" in printed and summary["short_of_count"] == []
    assert [d.value for d in back["a.jpg"].dice] == [5]
    # told three: both photos show two, and are listed for review
    printed, summary, back = label("3", tmp_path / "three")
    assert summary["short_of_count"] == ["a.jpg", "b.png"]
    assert "read with fewer than 3 dice: 2" in printed
    assert sorted(d.value for d in back["b.png"].dice) == [1, 5]
    r = subprocess.run(
        [sys.executable, "-m", "service.cli", "label", str(photos), "--out", str(tmp_path / "x")]
        + ["--expect", "0"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert r.returncode == 2 and "--expect must be a positive number of dice, got 0" in r.stderr


def test_cli_label_writes_an_iphone_heic_as_an_upright_jpeg_training_takes(tmp_path):
    """HEIC photos are read, and copied into the YOLO dataset as JPEG, turned upright as their
    labels are: the dataset is one CVAT, ultralytics and `dicecam train --data` take as is."""
    pillow_heif = pytest.importorskip(
        "pillow_heif", reason="pillow-heif: pip install 'dicecam[heif]'"
    )
    model, photos = _known_model_and_photos(tmp_path, {"a.jpg": (640, 480)})
    exif = Image.Exif()
    exif[0x0112] = 6  # stored 480x640, shown 640x480 as the JPEG
    heif = pillow_heif.from_pillow(Image.new("RGB", (480, 640), (90, 90, 90)))
    heif.save(photos / "IMG_0001.HEIC", exif=exif.tobytes())
    out = tmp_path / "out"
    proc = _label_cli(photos, out, "yolo", model)
    assert proc.returncode == 0, proc.stderr
    assert "labelled 2 of 2 photos (4 dice)" in proc.stdout
    images = {p.name: p for p in out.rglob("images/**/*") if p.is_file()}
    assert sorted(images) == ["IMG_0001.jpg", "a.jpg"]
    with Image.open(images["IMG_0001.jpg"]) as im:
        assert im.format == "JPEG" and im.size == (640, 480)
        assert im.getexif().get(0x0112, 1) == 1
    back = {Path(p.name).stem: p for p in read_labels(out)}
    assert back["IMG_0001"].dice == back["a"].dice  # the same boxes in the same 640x480 view
    # the dataset passes training's checks (photo formats, label lines) up to the model
    check = [sys.executable, "-m", "service.cli", "train", "--data", str(out)]
    check += ["--from", str(tmp_path / "absent.onnx")]
    proc = subprocess.run(check, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and "absent.onnx" in proc.stderr, proc.stderr
    assert "training reads" not in proc.stderr
