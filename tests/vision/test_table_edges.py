"""The edge check of the table step: a die the learned outline puts off the surface stays on
when the photo shows no edge between it and the surface nearby."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import EDGE_MIN_CONTRAST, Calibration, TableStage, edge_contrast
from vision.types import Die, Reading

from dicecam_testing.table import LeftHalfOutline

pytestmark = pytest.mark.usefixtures("table_settings")

LEFT_HALF = [(0.0, 0.0), (320.0, 0.0), (320.0, 480.0), (0.0, 480.0)]


def photo(right=(150, 150, 150), left=(150, 150, 150), noise=0.0, seed=0):
    """A 640x480 photo: one colour left of x=320, another right of it, with a grain of 8 px
    specks, ``noise`` grey levels strong, on the right half."""
    img = np.empty((480, 640, 3), np.float64)
    img[:, :320], img[:, 320:] = left, right
    if noise:
        specks = np.random.default_rng(seed).normal(0, noise, (60, 40, 1))
        img[:, 320:] += specks.repeat(8, 0).repeat(8, 1)
    return np.clip(img, 0, 255).astype(np.uint8)


def die_past_the_edge():
    return Die(4, (360, 220, 390, 250), 0.9)  # resting a die and more past x=320


def test_a_plain_surface_shows_no_edge_and_a_floor_of_another_colour_does():
    die = die_past_the_edge()
    reading = Reading(640, 480, [die])
    [plain] = edge_contrast(photo(), reading, [die], LEFT_HALF)
    assert plain.colour == pytest.approx(0.0, abs=0.01) and plain.texture < 0.5
    assert not plain.shows()
    [floor] = edge_contrast(photo(right=(110, 70, 40)), reading, [die], LEFT_HALF)
    assert floor.colour > 3 * EDGE_MIN_CONTRAST and floor.shows()
    # a slightly lighter patch of the same floor (shading) is not an edge
    [shade] = edge_contrast(photo(right=(158, 158, 158)), reading, [die], LEFT_HALF)
    assert 1 < shade.colour < EDGE_MIN_CONTRAST and not shade.shows()
    # lightness counts half: a floor 13 L* lighter passes for the same floor, a warmer one of
    # about that distance in hue does not
    [lighter] = edge_contrast(photo(right=(185, 185, 185)), reading, [die], LEFT_HALF)
    assert lighter.colour == pytest.approx(6.5, abs=0.3) and not lighter.shows()
    [warmer] = edge_contrast(photo(right=(165, 140, 130)), reading, [die], LEFT_HALF)
    assert warmer.colour == pytest.approx(11.8, abs=0.3) and warmer.shows()


def test_texture_alone_shows_an_edge():
    die = die_past_the_edge()
    [grain] = edge_contrast(photo(noise=25.0), Reading(640, 480, [die]), [die], LEFT_HALF)
    assert grain.colour < EDGE_MIN_CONTRAST  # the same colour, on average
    assert grain.texture > 5 and grain.shows()


def test_other_dice_are_left_out_of_both_sides_and_a_far_die_has_nothing_to_compare():
    die = die_past_the_edge()
    img = photo()
    img[200:280, 250:310] = (200, 30, 30)  # a big red die just inside the surface
    red = Die(2, (250, 200, 310, 280), 0.9)
    [c] = edge_contrast(img, Reading(640, 480, [die, red]), [die], LEFT_HALF)
    assert c.colour < 1 and c.texture < 0.5  # its pixels are on neither side
    [with_red] = edge_contrast(img, Reading(640, 480, [die]), [die], LEFT_HALF)
    assert with_red.texture > 5  # counted when it is not a die of the reading
    far = Die(1, (600, 20, 620, 40), 0.9)  # more than 3.5 die sizes from the surface
    assert edge_contrast(img, Reading(640, 480, [far]), [far], LEFT_HALF) == [None]


def test_the_table_step_keeps_on_a_die_past_an_edge_the_photo_does_not_show(monkeypatch):
    def off(stage, img):
        return stage.apply(Reading(640, 480, [die_past_the_edge()]), img).bust

    learned = TableStage(LeftHalfOutline())
    assert learned.edge_contrast == EDGE_MIN_CONTRAST
    assert not off(learned, photo())  # one plain floor: the outline's edge is not there
    assert off(learned, photo(right=(110, 70, 40)))  # a brown floor beside a grey table
    assert off(learned, photo(noise=25.0))  # a grained floor beside a smooth table
    # the photo as decoded at half size: the same calls
    assert off(learned, photo(right=(110, 70, 40))[::2, ::2].copy())
    assert not off(learned, photo()[::2, ::2].copy())
    assert off(TableStage(LeftHalfOutline(), edge_contrast=0), photo())  # 0: not asked
    # a calibration is the user's own boundary: not questioned
    half = Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)])
    assert off(TableStage(calibration=half), photo())
    assert "edge_contrast=10.0" in repr(learned)
    assert "edge_contrast" not in repr(TableStage(calibration=half))
    monkeypatch.setenv("DICECAM_SURFACE_EDGE_CONTRAST", "0")
    assert TableStage(LeftHalfOutline()).edge_contrast == 0 and off(
        TableStage(LeftHalfOutline()), photo()
    )
    monkeypatch.setenv("DICECAM_SURFACE_EDGE_CONTRAST", "-1")
    with pytest.raises(ValueError, match="surface_edge_contrast"):
        TableStage(LeftHalfOutline())
