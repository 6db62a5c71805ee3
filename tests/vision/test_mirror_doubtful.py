"""Mirror images read only for dice in doubt: the face classifier (``sure``), the die models
(``mirror_margin`` around the threshold they are judged by) and the setting that turns it off."""

from __future__ import annotations

import numpy as np
import pytest

from vision.config import VisionSettings
from vision.faces import FACE_SURE, FaceClassifier
from vision.table.dice import MIRROR_MARGIN

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

RGB = np.random.default_rng(0).integers(0, 255, (120, 120, 3), dtype=np.uint8)
BOXES = np.array([[10, 10, 50, 50], [60, 60, 100, 100], [20, 60, 60, 100]], np.float32)


class Spy:
    """Stands in for a model: logits by crop (the crop's first pixel tells the die, and whether
    it is mirrored: its last column is the crop's first), recording each run's batch size."""

    def __init__(self, crops: np.ndarray, logits: dict[tuple[int, bool], list[float]]) -> None:
        self.crops, self.logits, self.runs = crops, logits, []

    def run(self, blob: np.ndarray) -> np.ndarray:
        self.runs.append(len(blob))
        out = []
        for crop in blob:
            for k, own in enumerate(self.crops):
                if np.array_equal(crop, own):
                    out.append(self.logits[k, False])
                    break
                if np.array_equal(crop, own[..., ::-1]):
                    out.append(self.logits[k, True])
                    break
            else:
                raise AssertionError("a crop of no die was read")
        return np.array(out, np.float32)


def _face_logits(value: int, strength: float, other: int | None = None) -> list[float]:
    logits = [0.0] * 7
    logits[value - 1] = strength
    if other is not None:
        logits[other - 1] = strength
    return logits


def _faces(tmp_path, **kwargs) -> tuple[FaceClassifier, Spy]:
    from vision.faces import crop_die

    path = models.make_classifier(tmp_path / "f.onnx", np.zeros(7, np.float32), np.zeros(7))
    fc = FaceClassifier(path, **kwargs)
    crops = np.stack([crop_die(RGB, b, fc.size) for b in BOXES])
    crops = crops.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)
    spy = Spy(
        crops,
        {  # die 0 sure of a 4 (both ways); die 1 torn between 2 and 3, its mirror says 3;
            # die 2 sure of a 5, its mirror would say 6
            (0, False): _face_logits(4, 20.0),
            (0, True): _face_logits(4, 20.0),
            (1, False): _face_logits(2, 12.0, 3),
            (1, True): _face_logits(3, 20.0),
            (2, False): _face_logits(5, 20.0),
            (2, True): _face_logits(6, 20.0),
        },
    )
    fc._model = spy
    return fc, spy


def test_the_face_classifier_reads_mirrored_only_the_dice_it_doubts(tmp_path):
    fc, spy = _faces(tmp_path)
    assert fc.sure == FACE_SURE
    values, cocked, probs = fc.classify(RGB, BOXES)
    assert spy.runs == [3, 1]  # every crop, then the one doubtful die's mirror image
    assert values.tolist() == [4, 3, 5]  # die 1: its crop's even odds, the mirror's 3 tips it
    assert probs[1, 1] == pytest.approx(0.25, abs=1e-3)
    assert probs[1, 2] == pytest.approx(0.75, abs=1e-3)
    assert probs[2, 4] == pytest.approx(1.0, abs=1e-6)  # sure: the mirror's 6 never asked
    assert not cocked.any()


def test_sure_none_mirrors_every_die_in_one_run(tmp_path):
    fc, spy = _faces(tmp_path)
    values, _, probs = fc.classify(RGB, BOXES, sure=None)
    assert spy.runs == [6]
    assert values.tolist()[:2] == [4, 3]
    assert probs[2, 4] == pytest.approx(0.5, abs=1e-3)  # die 2 averaged with its mirror's 6
    fc_all, spy_all = _faces(tmp_path, sure=None)
    assert fc_all.classify(RGB, BOXES)[2][2, 4] == pytest.approx(0.5, abs=1e-3)
    assert spy_all.runs == [6]


def test_no_tta_reads_each_crop_once_whatever_the_bar(tmp_path):
    fc, spy = _faces(tmp_path, tta=False)
    values, _, probs = fc.classify(RGB, BOXES)
    assert spy.runs == [3]
    assert probs[1, 1] == pytest.approx(0.5, abs=1e-3) and probs[2, 4] == pytest.approx(1.0)


def test_a_die_model_mirrors_only_dice_near_the_bar_it_is_judged_by(tmp_path):
    from vision.table.dice import OffTableModel, context_crop

    path = models.bright_is_off(tmp_path / "m.onnx", meta={"tta": "True"})
    model = OffTableModel(path, threshold=0.5)
    assert model.tta and model.mirror_margin == MIRROR_MARGIN
    crops = np.stack([context_crop(RGB, b, model.size, model.context) for b in BOXES])
    crops = crops.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)
    # logits (on, off): die 0 at +1 logit, die 1 at +2.5, die 2 at -3; each mirror at -6
    spy = Spy(
        crops,
        {
            (0, False): [0.0, 1.0],
            (1, False): [0.0, 2.5],
            (2, False): [0.0, -3.0],
            (0, True): [0.0, -6.0],
            (1, True): [0.0, -6.0],
            (2, True): [0.0, -6.0],
        },
    )
    model._model = spy
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    assert model.flags(RGB, BOXES).tolist() == [False, True, False]
    assert spy.runs == [3, 1]  # only die 0 lies within 2 logits of the threshold's 0
    p = model.probability(RGB, BOXES, near=0.5)
    assert p == pytest.approx([(sig(1) + sig(-6)) / 2, sig(2.5), sig(-3)], abs=1e-5)
    spy.runs.clear()  # one bar per die: die 2 is near a bar of 0.1 (-2.2 logits), die 0 not
    p = model.probability(RGB, BOXES, near=np.array([0.999, 0.5, 0.1]))
    assert spy.runs == [3, 1]
    assert p == pytest.approx([sig(1), sig(2.5), (sig(-3) + sig(-6)) / 2], abs=1e-5)
    spy.runs.clear()  # without a bar (a caller that wants the probability itself): all mirrored
    p = model.probability(RGB, BOXES)
    assert spy.runs == [6]
    assert p[1] == pytest.approx((sig(2.5) + sig(-6)) / 2, abs=1e-5)
    spy.runs.clear()
    model.mirror_margin = None  # every die mirrored, as before
    assert model.flags(RGB, BOXES).tolist() == [False, False, False]
    assert spy.runs == [6]


def test_the_cocked_model_judges_doubt_by_the_bar_the_face_classifier_leaves_it(tmp_path):
    from vision.cocked import CockedModel
    from vision.table.dice import context_crop

    path = models.bright_is_off(tmp_path / "c.onnx", meta={"tta": "True", "threshold": "0.45"})
    model = CockedModel(path)
    crops = np.stack([context_crop(RGB, b, model.size, model.context) for b in BOXES])
    crops = crops.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)
    logits = {(k, m): [0.0, 0.0 if not m else -8.0] for k in range(3) for m in (False, True)}
    model._model = spy = Spy(crops, logits)  # every crop P(cocked) 0.5, its mirror's ~0
    # the face classifier's P(cocked): 0.4 leaves the model a bar of 0.5 (its 0.5: in doubt);
    # 0.0 a bar of 0.9 (2.2 logits away: not); 0.9 a bar of 0 (cocked whatever the model says)
    flags = model.flags(RGB, BOXES, np.array([0.4, 0.0, 0.9], np.float32))
    assert spy.runs == [3, 1]
    assert flags.tolist() == [False, False, True]  # die 0: (0.25 + 0.4) / 2 < 0.45


@pytest.mark.parametrize("doubtful", [True, False])
def test_the_setting_reaches_every_stage(tmp_path, doubtful):
    from vision.stages import load_stage

    det = tmp_path / "reader.onnx"
    models.make_model(det, models.raw_preds([]))
    faces = models.make_classifier(tmp_path / "f.onnx", np.zeros(7, np.float32), np.zeros(7))
    cocked = models.bright_is_off(tmp_path / "c.onnx", meta={"tta": "True"})
    verify = models.bright_is_off(tmp_path / "v.onnx", meta={"tta": "True"})
    settings = VisionSettings(mirror_doubtful=doubtful)
    assert load_stage("faces", faces, det, settings).sure == (FACE_SURE if doubtful else None)
    margin = MIRROR_MARGIN if doubtful else None
    assert load_stage("cocked", cocked, det, settings).mirror_margin == margin
    assert load_stage("verify", verify, det, settings).mirror_margin == margin
