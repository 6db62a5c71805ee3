"""The contact sheet of ``dicecam synth --preview`` (:mod:`vision.synth.preview`): each die's
box where its label says, in its state's colour, a mark that tells cocked, off-table and in-air
dice apart, hidden dice dashed, the playing-surface outline, and tiles in reading order."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth import COCKED_CLASS, make_sample
from vision.synth.preview import STATE_COLORS, contact_sheet, draw_labels, preview_sheet
from vision.synth.sample import Sample

GREY = 128
CYAN = (255, 255, 0)  # BGR


def _die(box, *, value: int = 3, state: str = "table", labelled: bool = True) -> dict:
    cls = COCKED_CLASS if state == "cocked" else value - 1
    shown = None if box is None else [box[0] + 6, box[1] + 6, box[2] - 6, box[3] - 6]
    return {
        "box": box,
        "visible_box": shown,  # where its pixels show: part of it hidden
        "value": value,
        "class": cls,
        "state": state,
        "labelled": labelled,
    }


def _sample(*dice: dict, outline=None, size=(120, 100), fill: int = GREY) -> Sample:
    w, h = size
    image = np.full((h, w, 3), fill, np.uint8)
    return Sample(image=image, jpeg=b"", dice=list(dice), meta={"outline": outline})


def _label_ink(im: np.ndarray, box) -> np.ndarray:
    """Where the label over a die at ``box`` is written (black text), as a boolean strip."""
    x1, y1 = int(box[0]), int(box[1])
    strip = im[max(0, y1 - 24) : y1, x1 : x1 + 60]
    return (strip.max(axis=2) < 40) & (strip.min(axis=2) < 40)


@pytest.mark.parametrize("state", ["table", "off_table", "in_air", "cocked"])
def test_a_labelled_die_is_boxed_where_its_label_says_in_its_state_colour(state):
    box = [20.0, 40.0, 60.0, 80.0]
    im = draw_labels(_sample(_die(box, state=state), size=(160, 100)))
    colour = STATE_COLORS[state]
    for y, x in ((60, 20), (60, 60), (40, 40), (80, 40)):  # the middle of each side
        assert tuple(im[y, x]) == colour, (state, y, x, im[y, x])
    assert (im[50:70, 30:50] == GREY).all()  # the die itself is left to be seen
    assert (im[:, 100:] == GREY).all() and (im[85:] == GREY).all()  # nothing away from it


def test_the_label_tells_the_value_cocked_off_table_and_in_air_apart():
    box = [20.0, 40.0, 60.0, 80.0]

    def ink(**kwargs) -> np.ndarray:
        return _label_ink(draw_labels(_sample(_die(box, **kwargs))), box)

    three, five = ink(value=3), ink(value=5)
    assert three.sum() > 10 and (three != five).any()  # the value is written
    # a cocked die has no top face: the same mark whatever face points up
    assert (ink(value=3, state="cocked") == ink(value=5, state="cocked")).all()
    assert (ink(value=3, state="cocked") != three).any()
    off, air = ink(state="off_table"), ink(state="in_air")
    assert (off != air).any() and (off != three).any() and (air != three).any()
    assert off.sum() > three.sum() and air.sum() > three.sum()  # the value and a word


def test_a_label_with_no_room_above_its_box_goes_below_it():
    box = [20.0, 2.0, 60.0, 40.0]
    im = draw_labels(_sample(_die(box)))
    green = (im == STATE_COLORS["table"]).all(axis=2)
    assert green[41:70, 20:40].sum() > 100  # the label's filled background, under the box
    assert (im[70:] == GREY).all()


def test_a_die_left_out_of_the_labels_is_dashed_grey_and_one_with_no_box_is_not_drawn():
    box = [20.0, 40.0, 80.0, 80.0]
    im = draw_labels(_sample(_die(box, labelled=False), _die(None, labelled=False)))
    top = im[40, 20:80]
    dash = (top == 150).all(axis=1)
    assert 0.4 < dash.mean() < 0.8  # dashes with gaps between them
    assert (im[80, 20:80] == top).all()  # the bottom edge the same
    changed = (im != GREY).any(axis=2)
    assert set(np.unique(im[changed])) == {150}  # no colour, no label
    assert not changed[41:80].any()  # no sides
    assert (draw_labels(_sample(_die(None))) == GREY).all()


def test_the_outline_is_drawn_in_cyan_where_its_corners_are():
    outline = [[10.0, 10.0], [110.0, 10.0], [110.0, 90.0], [10.0, 90.0]]
    im = draw_labels(_sample(outline=outline))
    for y, x in ((10, 60), (90, 60), (50, 10), (50, 110)):
        assert tuple(im[y, x]) == CYAN, (y, x, im[y, x])
    assert (im[20:80, 20:100] == GREY).all()
    assert (draw_labels(_sample(outline=None)) == GREY).all()


def test_drawing_labels_leaves_the_sample_image_as_it_was():
    sample = _sample(_die([20.0, 40.0, 60.0, 80.0]), outline=[[5, 5], [100, 5], [100, 90]])
    draw_labels(sample)
    assert (sample.image == GREY).all()


def test_a_contact_sheet_lays_tiles_in_reading_order_keeping_their_shape():
    shades = (30, 90, 200)
    samples = [_sample(size=(160, 80), fill=v) for v in shades]
    sheet = contact_sheet(samples, cols=2, tile=100)
    assert sheet.shape == (4 + 2 * (50 + 4), 4 + 2 * (100 + 4), 3)  # 100x50 tiles, 2 rows
    corners = [(4, 4), (4, 108), (58, 4)]  # row 1: tiles 1, 2; row 2: tile 3
    for (y, x), v in zip(corners, shades, strict=True):
        assert (sheet[y : y + 50, x : x + 100] == v).all(), (y, x)
    assert (sheet[58:108, 108:208] == 255).all()  # the empty place stays white
    assert (sheet[54:58] == 255).all()  # the gap between rows
    with pytest.raises(ValueError, match="at least one sample"):
        contact_sheet([])


def test_a_preview_sheet_draws_n_samples_from_start_with_their_labels():
    sheet = preview_sheet(seed=3, n=3, cols=3, size=(64, 64), tile=64, start=1)
    assert sheet.shape == (4 + 68, 4 + 3 * 68, 3)
    for k in range(3):
        expected = draw_labels(make_sample(3, 1 + k, 64, 64))
        x = 4 + k * 68
        assert (sheet[4:68, x : x + 64] == expected).all(), k
