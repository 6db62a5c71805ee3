"""Each synthetic die's sidecar says how far its top face's pips stand out in the photo, and
dice washed out past reading count neither as clear nor for the face classifier's crops."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from vision.matching import CLEAR_MIN_CONTRAST, clear_die
from vision.synth import render_scene
from vision.synth.camera import look_at
from vision.synth.legibility import face_contrast, ink_mask
from vision.synth.physics import DiePose
from vision.synth.render import face_frames
from vision.synth.scene import FACE_KINDS
from vision.train.crops import load_crops
from vision.yolo_dataset import load_labels


def test_ink_masks_hold_the_pips_of_each_face():
    style = {"kind": "pips", "pip_radius": 0.1, "corner": 0.2}
    areas = [float((ink_mask(style, v) > 0.5).sum()) for v in range(1, 7)]
    one = areas[0]
    for v, area in enumerate(areas, start=1):  # v pips of one size each
        assert abs(area / one - v) < 0.2 * v, (v, areas)
    numeral = ink_mask({"kind": "numeral"}, 4)
    assert 0 < (numeral > 0.5).mean() < 0.5


def test_ink_masks_follow_the_face_kind():
    """A numeral 1 and an emblem are big marks, not the single pip of a plain face's 1: the
    contrast of a numeral die is measured over its numeral's ink."""
    masks = {k: ink_mask({"kind": k, "pip_radius": 0.1}, 1) > 0.5 for k in FACE_KINDS}
    pip = float(masks["pips"].sum())
    assert masks["numeral"].sum() > 3 * pip and masks["emblem"].sum() > 3 * pip
    assert (masks["numeral"] != masks["emblem"]).any()
    ys, xs = np.nonzero(masks["pips"])  # one round pip in the middle
    assert abs(ys.mean() - 31.5) < 1 and abs(xs.mean() - 31.5) < 1
    assert abs((np.ptp(ys) + 1) - (np.ptp(xs) + 1)) <= 1


PINK = [230.0, 190.0, 240.0]  # pale pink (BGR)
GREY = [90.0, 90.0, 90.0]


def test_face_contrast_tells_clear_pips_from_washed_out_ones(one_die_scene):
    def _one_die(pip: list[float], *, exposure: float = 1.0) -> dict:
        return one_die_scene(3, body=PINK, pip=pip, table_color=GREY, exposure=exposure)

    dark = render_scene(_one_die([60.0, 20.0, 90.0]))  # dark pips on pale pink
    (die,) = dark.dice
    assert die["face_contrast"] > 40 and die["labelled"]
    post = dark.meta["scene"]["post"]
    assert clear_die(die, post) is True
    # the same die with pips of its own colour: a blank face
    (blank,) = render_scene(_one_die(PINK)).dice
    assert blank["face_contrast"] < 3
    assert clear_die(blank, post) is False
    # white pips, overexposed: the face clips to white and the pips vanish with it
    (lit,) = render_scene(_one_die([250.0, 250.0, 250.0])).dice
    (washed,) = render_scene(_one_die([250.0, 250.0, 250.0], exposure=2.5)).dice
    assert lit["face_contrast"] > CLEAR_MIN_CONTRAST > washed["face_contrast"]
    assert washed["value"] == lit["value"]  # the same throw, only the light changed


def _write(root, name: str, sample) -> None:
    for folder in ("images", "labels", "meta"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(root / "images" / f"{name}.png"), sample.image)
    (root / "labels" / f"{name}.txt").write_text("".join(f"{x}\n" for x in sample.yolo_lines()))
    (root / "meta" / f"{name}.json").write_text(json.dumps(sample.meta))


def test_a_washed_out_face_is_not_clear_and_gives_no_crop(tmp_path, one_die_scene):
    def _one_die(pip: list[float]) -> dict:
        return one_die_scene(3, body=PINK, pip=pip, table_color=GREY)

    _write(tmp_path, "dark", render_scene(_one_die([60.0, 20.0, 90.0])))
    _write(tmp_path, "blank", render_scene(_one_die(PINK)))
    assert load_labels(tmp_path / "images" / "dark.png").legible == [True]
    assert load_labels(tmp_path / "images" / "blank.png").legible == [False]
    assert load_labels(tmp_path / "images" / "blank.png").clear == [False]
    crops, classes = load_crops([tmp_path / "images"], jitter=1, size=32)
    assert len(crops) == 2  # the dark die and its jittered copy only
    # without a sidecar the same photo's die is cropped as before
    (tmp_path / "meta" / "blank.json").unlink()
    assert load_labels(tmp_path / "images" / "blank.png").legible is None
    assert len(load_crops([tmp_path / "images"], jitter=1, size=32)[0]) == 4


def _lab(bgr: list[float]) -> np.ndarray:
    return cv2.cvtColor(np.float32([[bgr]]) / 255.0, cv2.COLOR_BGR2LAB)[0, 0]


BODY, INK = [200.0, 225.0, 240.0], [40.0, 40.0, 40.0]  # a pale die with dark ink
EXACT = float(np.linalg.norm(_lab(BODY) - _lab(INK)))
W, H = 320, 240
CAM = look_at(np.array([0.0, -4.0, 12.0]), np.array([0.0, 0.0, 0.5]), 60.0, W, H)
QUARTER = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # a quarter turn about x: 3 on top


def _die(rotation: np.ndarray = QUARTER, x: float = 0.0) -> DiePose:
    return DiePose(np.array([x, 0.0, 1.0]), rotation, 2.0, True, False)


def _paint(pose: DiePose, style: dict) -> tuple[np.ndarray, np.ndarray]:
    """A photo of only the top face of ``pose``: ``INK`` where ``style`` inks it, ``BODY``
    elsewhere on the face, grey around it; and the die-id buffer (id 1 on the face)."""
    img = np.full((H, W, 3), 90.0, np.float32)
    ids = np.zeros((H, W), np.int32)
    value, _, corners = max(face_frames(pose), key=lambda f: f[1][2])
    mask = ink_mask(style, value)
    s = mask.shape[0]
    fp = CAM.project(corners).astype(np.float32)
    src = np.float32([[0, 0], [s, 0], [s, s], [0, s]])
    inked = cv2.warpPerspective(mask, cv2.getPerspectiveTransform(src, fp), (W, H))[..., None]
    face = cv2.fillConvexPoly(np.zeros((H, W), np.uint8), fp.round().astype(np.int32), 1) > 0
    img[face] = (np.float32(BODY) * (1 - inked) + np.float32(INK) * inked)[face]
    ids[face] = 1
    return img, ids


STYLES = [
    {"kind": "pips", "pip_radius": 0.14, "corner": 0.15},
    {"kind": "numeral", "pip_radius": 0.1, "corner": 0.15},
]


@pytest.mark.parametrize("style", STYLES, ids=["pips", "numeral"])
def test_face_contrast_is_the_lab_distance_of_the_top_faces_ink_from_its_body(style):
    img, ids = _paint(_die(), style)
    contrast = face_contrast(img, CAM, _die(), 1, ids, style=style)
    assert 0.85 * EXACT < contrast <= EXACT + 0.5, (contrast, EXACT)
    # half the face under another die of a third colour: what shows of it gives the same
    covered = img.copy()
    right = np.zeros((H, W), bool)
    right[:, W // 2 :] = True
    covered[right & (ids == 1)] = (30.0, 200.0, 40.0)
    ids_covered = np.where(right & (ids == 1), 2, ids)
    half = face_contrast(covered, CAM, _die(), 1, ids_covered, style=style)
    assert abs(half - contrast) < 0.05 * EXACT, (half, contrast)
    # wholly under another die: no ink and no body shows
    assert face_contrast(img, CAM, _die(), 1, np.where(ids == 1, 2, ids), style=style) == 0.0


def test_face_contrast_is_none_for_a_top_face_turned_away_or_out_of_the_frame():
    style = STYLES[0]
    a = math.radians(50)  # tipped towards +y: its top face (3) looks away from a low camera
    tipped = np.array([[1.0, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    low = look_at(np.array([0.0, -20.0, 3.0]), np.array([0.0, 0.0, 1.0]), 60.0, W, H)
    img = np.full((H, W, 3), 128.0, np.float32)
    everywhere = np.ones((H, W), np.int32)
    assert face_contrast(img, low, _die(tipped), 1, everywhere, style=style) is None
    assert face_contrast(img, CAM, _die(x=40.0), 1, everywhere, style=style) is None
