"""``dicecam read --annotate``: the names of the annotated copies (photos of one name from several
folders, a HEIC or WebP photo), an --annotate that names an existing file, and the note of a clip
without a roll kept off stdout under ``--json``."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from dicecam_testing.cli import ROOT
from dicecam_testing.cli import run_in_process as run

pytest.importorskip("onnx", reason="the onnx package builds the test model")
from dicecam_testing import onnx_models as models  # noqa: E402

SHIPPED = ROOT / "models" / "dicecam-reader.onnx"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A tiny reader that sees a 5 in every photo."""
    return models.make_model(tmp_path / "m.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})]))


def test_photos_of_one_name_in_three_folders_get_three_copies(capsys, tmp_path, model):
    widths = {"a": 320, "b": 480, "c": 640}
    for folder, width in widths.items():
        (tmp_path / folder).mkdir()
        Image.new("RGB", (width, 240), (40, 120, 40)).save(tmp_path / folder / "roll.jpg")
    out = tmp_path / "out"
    photos = [str(tmp_path / folder / "roll.jpg") for folder in widths]

    code, _, err = run(capsys, "read", "--model", str(model), "--annotate", str(out), *photos)

    assert (code, err) == (0, "")
    names = ["roll.jpg", "roll_1.jpg", "roll_2.jpg"]
    assert sorted(p.name for p in out.iterdir()) == names
    # each copy is its own photo's, in the order the photos were named
    assert [Image.open(out / name).size[0] for name in names] == list(widths.values())


def test_annotate_naming_an_existing_file_is_a_usage_error(capsys, tmp_path, model):
    photo = tmp_path / "roll.jpg"
    Image.new("RGB", (320, 240), (40, 120, 40)).save(photo)
    taken = tmp_path / "f"
    taken.write_text("mine")

    code, out, err = run(
        capsys, "read", "--model", str(model), "--annotate", str(taken), str(photo)
    )

    assert (code, out) == (2, "")
    assert err == (
        f"dicecam read: error: --annotate expects a folder, got an existing file: {taken}\n"
    )
    assert taken.read_text() == "mine"


def test_a_heic_or_webp_photo_is_annotated_as_a_jpeg_and_a_png_as_a_png(capsys, tmp_path, model):
    pillow_heif = pytest.importorskip("pillow_heif")
    im = Image.new("RGB", (320, 240), (40, 120, 40))
    pillow_heif.from_pillow(im).save(tmp_path / "IMG_0001.HEIC")
    im.save(tmp_path / "p.webp")
    im.save(tmp_path / "q.PNG")
    out = tmp_path / "out"
    photos = [str(tmp_path / name) for name in ("IMG_0001.HEIC", "p.webp", "q.PNG")]

    code, _, err = run(capsys, "read", "--model", str(model), "--annotate", str(out), *photos)

    assert (code, err) == (0, "")
    assert sorted(p.name for p in out.iterdir()) == ["IMG_0001.jpg", "p.jpg", "q.png"]
    assert (out / "IMG_0001.jpg").read_bytes()[:3] == b"\xff\xd8\xff"  # JPEG data, as named
    assert (out / "p.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert (out / "q.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_clip_without_a_roll_under_json_leaves_stdout_to_json_lines(capsys, tmp_path):
    still = tmp_path / "empty.avi"
    writer = cv2.VideoWriter(str(still), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 480))
    if not writer.isOpened():
        pytest.skip("this OpenCV build writes no MJPG video")
    for _ in range(8):  # a hand over the table: no dice
        writer.write(np.full((480, 640, 3), 90, np.uint8))
    writer.release()

    code, out, err = run(capsys, "read", "--json", "--model", str(SHIPPED), str(still))

    assert (code, out) == (0, "")  # no roll: no JSON line, and nothing else on stdout
    assert err == f"{still}: no roll came to rest (dice still for 500 ms)\n"
    code, out, err = run(capsys, "read", "--model", str(SHIPPED), str(still))
    assert (code, err) == (0, "")
    assert out == f"{still}: no roll came to rest (dice still for 500 ms)\n"
