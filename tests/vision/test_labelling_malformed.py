"""Malformed label files give a LabelFormatError naming the entry, never a bare TypeError or a
NaN box: exports are edited by hand and by other tools before they come back."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    read_coco,
    read_labelstudio,
    read_yolo,
    write_coco,
    write_labelstudio,
    write_yolo,
)
from vision.types import Die

REPO = Path(__file__).resolve().parents[2]

JUNK = [None, True, -1, 0, 1e308, float("nan"), float("inf"), "", "x", "1", [], {}, [1, 2],
        {"a": 1}, 2**70, -0.5]  # fmt: skip


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, object]:
    """A photo with two dice, written as COCO and as Label Studio (with a human correction)."""
    root = tmp_path_factory.mktemp("exports")
    (root / "images").mkdir()
    Image.new("RGB", (60, 40)).save(root / "images" / "a.jpg")
    dice = [Die(3, (1.0, 2.0, 20.0, 30.0), 0.9), Die(5, (30.0, 5.0, 50.0, 35.0), 0.8, cocked=True)]
    photo = LabelledPhoto("a.jpg", 60, 40, dice, root / "images" / "a.jpg")
    coco = json.loads(write_coco([photo], root / "coco").read_text())
    tasks = json.loads(write_labelstudio([photo], root / "ls").read_text())
    tasks[0]["annotations"] = [
        {"id": 1, "result": tasks[0]["predictions"][0]["result"][:1], "was_cancelled": False}
    ]
    return {"root": root, "coco": coco, "labelstudio": tasks}


def _paths(obj, prefix=()):
    if prefix:
        yield prefix
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for key, value in items:
        yield from _paths(value, (*prefix, key))


@st.composite
def mutated(draw, doc):
    """``doc`` with one to three of its entries replaced by junk or removed."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(doc))))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(path[-1])
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(JUNK)))
    return doc


@pytest.mark.parametrize("fmt", ["coco", "labelstudio"])
def test_mangled_exports_raise_only_label_format_errors(exports, fmt, tmp_path_factory):
    root = exports["root"]
    read = read_coco if fmt == "coco" else read_labelstudio
    out = tmp_path_factory.mktemp(fmt) / "labels.json"

    # No deadline: on a loaded 2-core CI machine one example may take over hypothesis's 200 ms.
    @settings(
        max_examples=300,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(mutated(exports[fmt]))
    def check(doc):
        out.write_text(json.dumps(doc))
        try:
            photos = read(out, image_root=root / "images")
        except LabelFormatError as exc:
            assert str(out) in str(exc)  # it names the file (and the entry)
            return
        for p in photos:  # what is read is usable: whole sizes, finite boxes with some area
            assert p.width >= 1 and p.height >= 1
            for d in p.dice:
                x1, y1, x2, y2 = d.box
                assert x2 > x1 and y2 > y1, d.box

    check()


def test_coco_entry_is_named(exports, tmp_path):
    doc = copy.deepcopy(exports["coco"])
    doc["annotations"][1]["bbox"][2] = float("nan")
    (tmp_path / "c.json").write_text(json.dumps(doc))
    with pytest.raises(
        LabelFormatError, match=r"annotation 2: expected a number for bbox, got nan"
    ):
        read_coco(tmp_path / "c.json", image_root=exports["root"] / "images")
    doc["annotations"][1]["bbox"] = [1, 2, 0, 5]
    (tmp_path / "c.json").write_text(json.dumps(doc))
    with pytest.raises(LabelFormatError, match=r"annotation 2: expected a box of positive width"):
        read_coco(tmp_path / "c.json", image_root=exports["root"] / "images")
    doc["images"][0] = ["a.jpg"]
    (tmp_path / "c.json").write_text(json.dumps(doc))
    with pytest.raises(LabelFormatError, match=r"image 1: unexpected content"):
        read_coco(tmp_path / "c.json", image_root=exports["root"] / "images")


def test_labelstudio_task_is_named(exports, tmp_path):
    tasks = copy.deepcopy(exports["labelstudio"])
    tasks[0]["annotations"][0]["result"][0]["value"]["width"] = "wide"
    (tmp_path / "t.json").write_text(json.dumps(tasks))
    with pytest.raises(LabelFormatError, match=r"task 1: region die1: expected a number for width"):
        read_labelstudio(tmp_path / "t.json", image_root=exports["root"] / "images")
    tasks[0]["annotations"] = "none"
    (tmp_path / "t.json").write_text(json.dumps(tasks))
    with pytest.raises(LabelFormatError, match=r"task 1: unexpected content"):
        read_labelstudio(tmp_path / "t.json", image_root=exports["root"] / "images")


def test_yolo_nan_lines_names_and_bytes(exports, tmp_path):
    photo = LabelledPhoto("a.jpg", 60, 40, [Die(2, (1, 2, 20, 30), 0.9)], None)
    Image.new("RGB", (60, 40)).save(tmp_path / "a.jpg")
    photo.image = tmp_path / "a.jpg"
    root = tmp_path / "y"
    write_yolo([photo], root)
    label = next(root.glob("labels/**/a.txt"))
    label.write_text("0 nan 0.5 0.2 0.2\n")
    with pytest.raises(LabelFormatError, match=r"a\.txt:1: expected a box of positive width"):
        read_yolo(root)
    label.write_bytes(b"\xff\xfe0 0.5 0.5 0.2 0.2\n")
    with pytest.raises(LabelFormatError, match=r"a\.txt: unexpected content \('utf-8' codec"):
        read_yolo(root)
    label.write_text("0 0.5 0.5 0.2 0.2\n")
    (root / "data.yaml").write_text("names: {0: '1', x: '2'}\n")
    with pytest.raises(LabelFormatError, match=r"data\.yaml: names: unexpected content"):
        read_yolo(root)


def test_cli_import_of_a_mangled_export_is_one_clear_line(exports, tmp_path):
    doc = copy.deepcopy(exports["coco"])
    doc["annotations"][0]["bbox"] = "0 0 5 5"
    (tmp_path / "c.json").write_text(json.dumps(doc))
    cmd = [sys.executable, "-m", "service.cli", "labels", "import", str(tmp_path / "c.json")]
    cmd += ["--images-from", str(exports["root"] / "images"), "--out", str(tmp_path / "t")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2, r.stderr
    assert "annotation 1: expected bbox [x, y, w, h]" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "t").exists()
