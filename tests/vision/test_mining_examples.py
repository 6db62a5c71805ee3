"""The die check's examples (:mod:`vision.train.mining`): boxes the shipped detector finds on a
rendered roll are dice where they match a labelled die, false where they match none, and left
out where they match a die hidden past labelling; background boxes are false ones."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from vision import DiceReader
from vision.matching import match_dice
from vision.table.dice import context_crop
from vision.train.mining import MINE_CONF, mine_crops, synth_items


def test_synth_items_split_labelled_dice_from_hidden_ones_and_skip_boxless_ones(tmp_path):
    root = tmp_path / "s"
    (root / "meta" / "train").mkdir(parents=True)
    (root / "images" / "train").mkdir(parents=True)
    cv2.imwrite(str(root / "images" / "train" / "a.jpg"), np.zeros((60, 80, 3), np.uint8))
    dice = [
        {"labelled": True, "box": [1, 2, 11, 12]},
        {"labelled": False, "box": [20, 20, 30, 30]},
        {"labelled": True, "box": None},
        {"labelled": True, "box": [40, 5, 52, 17]},
    ]
    (root / "meta" / "train" / "a.json").write_text(json.dumps({"dice": dice}))
    (root / "meta" / "train" / "b.json").write_text("{cut")  # skipped, as is a missing photo
    (root / "meta" / "train" / "c.json").write_text(json.dumps({"dice": dice}))
    ((path, image, labelled, hidden),) = list(synth_items(root, "train"))
    assert path.name == "a.jpg" and image.shape == (60, 80, 3)
    assert labelled == [(1, 2, 11, 12), (40, 5, 52, 17)] and hidden == [(20, 20, 30, 30)]
    with pytest.raises(FileNotFoundError, match="expected sidecars in"):
        list(synth_items(root, "val"))


@pytest.fixture(scope="module")
def roll(tmp_path_factory):
    """A rendered photo with three dice, the shipped detector finds all three."""
    from vision.synth import write_dataset

    root = tmp_path_factory.mktemp("rolls")
    write_dataset(root, 2, seed=3, size=(320, 240), val_fraction=0.0)
    _, (path, image, labelled, _) = list(synth_items(root, "train"))
    assert path.name == "synth_s3_000001.jpg" and len(labelled) == 3
    return image, labelled


def test_a_box_on_a_labelled_die_is_a_die_on_no_die_false_and_on_a_hidden_die_left_out(roll):
    image, (die, hidden, unlisted) = roll
    reader = DiceReader(None, conf=MINE_CONF, table=None, cocked=False, verify=False)
    boxes = [d.box for d in reader.read(image[..., ::-1].copy()).dice]
    assert len(boxes) == 3
    (_, on_die), (_, on_unlisted) = sorted((i, j) for i, j in match_dice([die, unlisted], boxes))
    mined = mine_crops(reader, [(None, image, [die], [hidden])], size=32, context=2.0)
    assert len(mined.labels) == 2  # the box on the hidden die is not asked
    by_label = dict(zip(mined.labels, mined.crops, strict=True))
    np.testing.assert_array_equal(by_label[1], context_crop(image, boxes[on_die], 32, 2.0))
    np.testing.assert_array_equal(by_label[0], context_crop(image, boxes[on_unlisted], 32, 2.0))


def test_background_boxes_are_false_ones_and_come_first(roll):
    image, labelled = roll
    reader = DiceReader(None, conf=MINE_CONF, table=None, cocked=False, verify=False)
    mined = mine_crops(reader, [(None, image, labelled, [])], background=2)
    assert mined.labels == [0, 0, 1, 1, 1]
    x, y = mined.arrays(48)
    assert x.shape == (5, 48, 48, 3) and y.tolist() == mined.labels


def test_a_box_taken_by_a_labelled_die_stays_a_die_beside_a_hidden_die_under_it(roll):
    # a die hidden right under a labelled one (stacked): the box is the labelled die's
    image, (die, _, _) = roll
    reader = DiceReader(None, conf=MINE_CONF, table=None, cocked=False, verify=False)
    mined = mine_crops(reader, [(None, image, [die], [die])])
    assert sorted(mined.labels) == [0, 0, 1]
