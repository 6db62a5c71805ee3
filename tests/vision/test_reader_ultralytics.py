"""A real ultralytics ONNX export (untrained YOLO11n, 7 classes) read by DiceReader gives the same
dice as ultralytics' own predictor on the same file: metadata, layout and box maths agree."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision import DiceReader

SCRIPT = r"""
import json, shutil, sys
from pathlib import Path
import numpy as np
import torch
from ultralytics import YOLO
from ultralytics.nn.tasks import DetectionModel

out, image, wide = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
torch.manual_seed(0)
yolo = YOLO("yolo11n.yaml")
model = DetectionModel("yolo11n.yaml", nc=7, verbose=False)
model.names = {i: str(i + 1) for i in range(6)} | {6: "cocked"}
model.args, model.task, model.yaml = yolo.model.args, "detect", yolo.model.yaml | {"nc": 7}
for seq in model.model[-1].cv3:  # random class logits: scores spread, classes varied
    seq[-1].bias.data.normal_(0.0, 2.0)
yolo.model = model
onnx = yolo.export(format="onnx", imgsz=160, nms=False, dynamic=False, simplify=True, opset=12,
                   project=str(out), verbose=False)
# ultralytics writes NAME.onnx beside the weights: keep each export under its own name
onnx = shutil.copyfile(onnx, out / "fixed.onnx").resolve()
pred = YOLO(str(onnx), task="detect").predict(image, imgsz=160, conf=0.3, iou=0.5, agnostic_nms=True,
                                         max_det=300, verbose=False)[0]
rows = [[*map(float, b.xyxy[0]), float(b.conf[0]), int(b.cls[0])] for b in pred.boxes]
# the same weights with free height and width: ultralytics reads a wide photo at its own aspect
dyn = yolo.export(format="onnx", imgsz=160, nms=False, dynamic=True, simplify=True, opset=12,
                  project=str(out), verbose=False)
dyn = shutil.copyfile(dyn, out / "dynamic.onnx").resolve()
pred = YOLO(str(dyn), task="detect").predict(wide, imgsz=160, conf=0.3, iou=0.5, agnostic_nms=True,
                                        max_det=300, verbose=False)[0]
wide_rows = [[*map(float, b.xyxy[0]), float(b.conf[0]), int(b.cls[0])] for b in pred.boxes]
(out / "result.json").write_text(json.dumps(
    {"onnx": str(onnx), "boxes": rows, "dynamic": str(dyn), "wide_boxes": wide_rows}
))
"""


@pytest.mark.slow
def test_matches_ultralytics_predictions_on_its_own_export(tmp_path):
    # find_spec, not importorskip: importing ultralytics here would patch PIL.Image.open for
    # every later test of the session (the export runs in a subprocess)
    if importlib.util.find_spec("ultralytics") is None:
        pytest.skip("the train extra (ultralytics) makes the export")
    if importlib.util.find_spec("onnxslim") is None:
        pytest.skip("ultralytics' ONNX export needs onnxslim offline")
    image = tmp_path / "scene.png"
    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 255, (160, 160, 3), dtype=np.uint8)).save(image)
    wide = tmp_path / "wide.png"
    Image.fromarray(rng.integers(0, 255, (150, 200, 3), dtype=np.uint8)).save(wide)
    env = dict(
        os.environ,
        YOLO_OFFLINE="1",
        YOLO_CONFIG_DIR=str(tmp_path / "yolo"),
        MPLCONFIGDIR=str(tmp_path / "mpl"),
        YOLO_VERBOSE="False",
    )
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(image), str(wide)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = json.loads((tmp_path / "result.json").read_text())

    # one look, as ultralytics reads (no mirror image)
    reader = DiceReader(Path(expected["onnx"]), conf=0.3, iou=0.5, mirror=False)
    assert reader.imgsz == (160, 160) and reader.fixed_batch == 1 and not reader.dynamic
    assert reader.names[6] == "cocked"
    _assert_same(reader.read(image).dice, expected["boxes"])
    # dynamic export: a 200x150 photo runs at 160x128 (ultralytics' rectangular letterbox)
    reader = DiceReader(Path(expected["dynamic"]), conf=0.3, iou=0.5, mirror=False)
    assert reader.dynamic and reader.imgsz == (160, 160)
    assert reader.input_shape(150, 200) == (128, 160)
    _assert_same(reader.read(wide).dice, expected["wide_boxes"])


def _assert_same(dice, boxes) -> None:
    theirs = sorted(boxes, key=lambda r: -r[4])[:20]
    assert len(theirs) >= 5, "the untrained model should still produce boxes"
    assert len(dice) == len(boxes)
    assert {c for *_, c in boxes} != {boxes[0][5]}  # several classes
    for x1, y1, x2, y2, conf, cls in theirs:
        best = min(dice, key=lambda d: np.abs(np.subtract(d.box, (x1, y1, x2, y2))).max())
        np.testing.assert_allclose(best.box, (x1, y1, x2, y2), atol=0.5)
        assert best.confidence == pytest.approx(conf, abs=1e-4)
        if cls < 6:
            assert (best.value, best.cocked) == (cls + 1, False)
        else:
            assert best.cocked
