"""vision.yolo_output: an ultralytics export's metadata and output layouts."""

from __future__ import annotations

import numpy as np
import pytest

from vision import yolo_output
from vision.yolo_output import (
    ClassRoles,
    DetectorInfo,
    decode_end2end,
    decode_raw,
    default_names,
    metadata_imgsz,
    metadata_names,
    metadata_stride,
)

FACES = {i: str(i + 1) for i in range(6)}


def test_metadata_is_read_with_safe_fallbacks():
    assert metadata_imgsz({"imgsz": "[384, 512]"}, "height", "width") == (384, 512)
    assert metadata_imgsz({"imgsz": "416"}, "height", "width") == (416, 416)
    assert metadata_imgsz({"imgsz": "nonsense("}, "height", "width") == (640, 640)
    assert metadata_imgsz({"imgsz": "[384, 512]"}, 320, 320) == (320, 320)  # fixed input wins
    strides = [{}, {"stride": "16"}, {"stride": "x"}, {"stride": "0"}]
    assert [metadata_stride(m) for m in strides] == [32, 16, 32, 32]
    assert metadata_names({"names": "['die']"}) == {0: "die"}
    assert metadata_names({}) == {}
    with pytest.raises(ValueError, match="unreadable 'names' metadata '{oops'"):
        metadata_names({"names": "{oops"})


def test_class_roles_from_names_and_defaults():
    roles = ClassRoles.from_names({**{i: str(6 - i) for i in range(6)}, 6: "Cocked"})
    assert roles.faces.tolist() == [5, 4, 3, 2, 1, 0] and roles.cocked == 6
    assert ClassRoles.from_names({0: "die"}).num_classes == 1
    with pytest.raises(ValueError, match="got class 6 = 'seven'"):
        ClassRoles.from_names({**FACES, 6: "seven"})
    with pytest.raises(ValueError, match="expected one class per face 1 to 6"):
        ClassRoles.from_names({0: "1", 1: "2"})
    assert default_names(11, end2end=False) == {**FACES, 6: "cocked"}
    assert default_names(10, end2end=False) == FACES
    assert default_names("channels", end2end=True) == FACES
    assert default_names(300, end2end=True) == FACES  # (batch, 300 rows, 6): not 296 classes
    with pytest.raises(ValueError, match="got class 1 = '1'"):  # two classes for one face
        ClassRoles.from_names({0: "1", 1: "1", **{i: str(i) for i in range(2, 7)}})


def test_detector_info_reads_an_end_to_end_export_however_its_metadata_spells_true():
    for spelt in ("True", "true", " TRUE "):
        info = DetectorInfo.read({"end2end": spelt}, (1, 3, 320, 320), (1, 300, 6))
        assert info.end2end and info.names == FACES and info.roles.cocked is None
    assert not DetectorInfo.read({}, (1, 3, 320, 320), (1, 10, 2100)).end2end


def test_raw_and_end_to_end_layouts_decode_alike():
    roles = ClassRoles.from_names({**FACES, 6: "cocked"})
    raw = np.zeros((11, 3), np.float32)
    raw[:4, 0], raw[4 + 1, 0] = [50, 50, 20, 20], 0.9  # a 2
    raw[:4, 1], raw[4 + 6, 1], raw[4 + 3, 1] = [100, 80, 10, 30], 0.8, 0.3  # cocked (guess 4)
    raw[:4, 2], raw[4 + 5, 2] = [10, 10, 4, 4], 0.1  # under the threshold
    boxes, conf, values, cocked = decode_raw(raw, roles, conf=0.25)
    assert boxes.tolist() == [[40, 40, 60, 60], [95, 65, 105, 95]]
    assert conf.tolist() == pytest.approx([0.9, 0.8]) and values.tolist() == [2, 4]
    assert cocked.tolist() == [False, True]
    # the (N, 4 + nc) layout is the same output transposed
    assert decode_raw(raw.T.copy(), roles, conf=0.25)[0].tolist() == boxes.tolist()
    rows = np.array([[40, 40, 60, 60, 0.9, 1], [95, 65, 105, 95, 0.8, 6], [0, 0, 1, 1, 0.1, 2]])
    boxes2, conf2, values2, cocked2 = decode_end2end(rows.astype(np.float32), roles, conf=0.25)
    assert boxes2.tolist() == boxes.tolist() and values2.tolist() == [2, 0]
    assert cocked2.tolist() == [False, True]


def test_a_box_at_the_threshold_counts_and_too_many_keep_the_surest(monkeypatch):
    roles = ClassRoles.from_names(FACES)
    raw = np.zeros((10, 5), np.float32)
    raw[:4] = 10
    raw[4, :] = [0.25, 0.3, 0.9, 0.5, 0.2]  # each a 1
    assert decode_raw(raw, roles, conf=0.25)[1].tolist() == pytest.approx([0.25, 0.3, 0.9, 0.5])
    monkeypatch.setattr(yolo_output, "MAX_CANDIDATES", 2)  # as ultralytics: the surest go on
    assert sorted(decode_raw(raw, roles, conf=0.25)[1].tolist()) == pytest.approx([0.5, 0.9])


def test_an_input_size_is_fixed_only_when_both_sides_are_and_absent_metadata_means_640():
    # one named (dynamic) side: the metadata's size, not the fixed side and a name
    assert metadata_imgsz({"imgsz": "[384, 512]"}, 320, "width") == (384, 512)
    assert metadata_imgsz({}, "height", "width") == (640, 640)
    info = DetectorInfo.read({"imgsz": "[384, 512]"}, (1, 3, 320, "width"), (1, 10, 2100))
    assert info.dynamic and info.imgsz == (384, 512)
    fixed = DetectorInfo.read({}, (4, 3, 320, 256), (4, 10, 1680))
    assert (fixed.fixed_batch, fixed.dynamic, fixed.imgsz) == (4, False, (320, 256))
    assert DetectorInfo.read({}, ("batch", "3", 320, 320), (1, 10, 2100)).fixed_batch is None
    with pytest.raises(ValueError, match=r"batch, 3, height, width\), got \(1, 1, 320, 320\)"):
        DetectorInfo.read({}, (1, 1, 320, 320), (1, 10, 2100))  # a grey input


def test_a_face_named_0_is_named_and_any_name_with_cock_marks_the_leaning_class():
    # classes named 0-5 (faces counted from 0) are refused by the name that is not a face
    with pytest.raises(ValueError, match="got class 0 = '0'"):
        ClassRoles.from_names({i: str(i) for i in range(7)})
    assert ClassRoles.from_names({**FACES, 6: "Cocked die"}).cocked == 6


def test_a_leaning_score_tied_with_the_best_face_is_a_face_and_an_end_to_end_row_at_the_threshold_counts():
    roles = ClassRoles.from_names({**FACES, 6: "cocked"})
    raw = np.zeros((11, 1), np.float32)
    raw[:4, 0], raw[4 + 2, 0], raw[4 + 6, 0] = [50, 50, 20, 20], 0.5, 0.5
    _, _, values, cocked = decode_raw(raw, roles, conf=0.25)
    assert values.tolist() == [3] and cocked.tolist() == [False]
    rows = np.array([[40, 40, 60, 60, 0.25, 1], [0, 0, 9, 9, 0.2499, 2]], np.float32)
    assert decode_end2end(rows, roles, conf=0.25)[2].tolist() == [2]
