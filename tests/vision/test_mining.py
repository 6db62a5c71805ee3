"""Mining the shipped detector's boxes for the die check: a box on a labelled die is a die, a box
on no die is not, a box on a die hidden past labelling is left out; background boxes come first
as negatives, clear of every die; a synthetic folder's sidecars and a YOLO folder give their
photos' dice, at most ``limit`` photos."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision.table.dice import context_crop
from vision.train.mining import (
    MINE_CONF,
    background_boxes,
    mine_crops,
    synth_items,
    yolo_items,
)
from vision.yolo_dataset import load_labels


@pytest.fixture(scope="module")
def rolls(tmp_path_factory) -> Path:
    from vision.synth import write_dataset

    root = tmp_path_factory.mktemp("mine") / "rolls"
    write_dataset(root, 3, seed=5, size=(320, 240), val_fraction=0.0)
    return root


def test_synthetic_sidecars_and_yolo_labels_give_the_same_dice(rolls: Path):
    items = list(synth_items(rolls, "train"))
    assert len(items) == 3
    for path, image, labelled, _hidden in items:
        truth = [d.box for d in load_labels(path).truth(320, 240)]
        assert image.shape == (240, 320, 3) and labelled and len(labelled) == len(truth)
        for box, want in zip(sorted(labelled), sorted(truth), strict=True):
            assert box == pytest.approx(want, abs=1.0)
    assert len(list(yolo_items(rolls / "images", None, limit=2))) == 2
    assert len(list(yolo_items(rolls / "images", None, limit=1))) == 1
    assert len(list(yolo_items(rolls / "images", None))) == 3


def test_each_box_read_is_a_die_not_a_die_or_left_out_by_what_it_is_on(rolls: Path):
    reader = DiceReader(conf=MINE_CONF, table=None, cocked=False, verify=False)
    path, image, labelled, _ = max(synth_items(rolls, "train"), key=lambda item: len(item[2]))
    boxes = [d.box for d in reader.read(np.ascontiguousarray(image[..., ::-1])).dice]
    assert len(labelled) >= 3 and len(boxes) >= 3

    def crop(box) -> np.ndarray:
        return context_crop(image, box, 48, 1.5)

    # every die labelled: each box the reader puts on one is a die
    mined = mine_crops(reader, [(path, image, labelled, [])], context=1.5)
    on_dice = sum(mined.labels)
    assert on_dice >= 3 and len(mined.crops) == len(boxes)
    for got, box in zip(mined.crops, boxes, strict=True):
        np.testing.assert_array_equal(got, crop(box))  # the boxes of the photo read in RGB
    # none labelled: every box is not a die
    mined = mine_crops(reader, [(path, image, [], [])], context=1.5)
    assert mined.labels == [0] * len(boxes)
    # the first two dice labelled, the rest hidden past labelling: those boxes are left out
    mined = mine_crops(reader, [(path, image, labelled[:2], labelled[2:])], context=1.5)
    assert sum(mined.labels) == 2
    assert len(mined.crops) == len(boxes) - (on_dice - 2)
    # background boxes first, negatives, away from labelled and hidden dice alike
    mined = mine_crops(
        reader, [(path, image, labelled[:1], labelled[1:])], context=1.5, background=6, seed=3
    )
    away = background_boxes(np.random.default_rng(3), image.shape[:2], labelled, 6)
    assert away and mined.labels[: len(away)] == [0] * len(away)
    for got, box in zip(mined.crops, away, strict=False):
        np.testing.assert_array_equal(got, crop(box))
    x, y = mined.arrays(48)
    assert x.shape == (len(mined.labels), 48, 48, 3) and y.tolist() == mined.labels


def test_background_boxes_keep_half_a_die_clear_where_they_crowd_it():
    die = (80.0, 80.0, 120.0, 120.0)  # grown by half its size: 60..140
    boxes = background_boxes(np.random.default_rng(1), (200, 200), [die], 100)
    assert len(boxes) >= 20
    for x1, y1, x2, y2 in boxes:
        assert x2 < 60 or x1 > 140 or y2 < 60 or y1 > 140, (x1, y1, x2, y2)
