"""Each synthetic die's sidecar says how far its top face's pips stand out in the photo, and
dice washed out past reading count neither as clear nor for the face classifier's crops."""

from __future__ import annotations

import json

import cv2

from vision.matching import CLEAR_MIN_CONTRAST, clear_die
from vision.synth import render_scene
from vision.synth.legibility import ink_mask
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
