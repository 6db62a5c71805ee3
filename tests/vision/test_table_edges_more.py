"""The edge check's measurements at their edges: the bars themselves, a grained table beside a
plain floor, a floor strewn with specks of colour, a die whose surroundings lie partly on the
surface, and how far from the surface a die is still compared."""

from __future__ import annotations

import numpy as np

from vision.table import EDGE_MIN_CONTRAST, EdgeContrast, edge_contrast
from vision.table.edges import EDGE_MIN_TEXTURE
from vision.types import Die, Reading

LEFT_HALF = [(0.0, 0.0), (320.0, 0.0), (320.0, 480.0), (0.0, 480.0)]


def _contrast(img: np.ndarray, box) -> EdgeContrast | None:
    die = Die(4, box, 0.9)
    [c] = edge_contrast(img, Reading(640, 480, [die]), [die], LEFT_HALF)
    return c


def _grey() -> np.ndarray:
    return np.full((480, 640, 3), 150, np.uint8)


def test_an_edge_shows_from_either_bar_itself():
    assert EdgeContrast(EDGE_MIN_CONTRAST, 0.0).shows()
    assert EdgeContrast(0.0, 5.0).shows()  # EDGE_MIN_TEXTURE
    assert not EdgeContrast(9.99, 4.99).shows()
    assert EdgeContrast(7.0, 0.0).shows(min_contrast=7.0)
    assert not EdgeContrast(0.0, 5.0).shows(min_texture=5.5)


def test_a_grained_table_beside_a_plain_floor_shows_an_edge():
    img = _grey().astype(np.float64)
    specks = np.random.default_rng(0).normal(0, 25, (60, 40, 1)).repeat(8, 0).repeat(8, 1)
    img[:, :320] += specks  # the grain is on the surface, the floor beyond is plain
    c = _contrast(np.clip(img, 0, 255).astype(np.uint8), (360, 220, 390, 250))
    assert c.colour < EDGE_MIN_CONTRAST and c.texture > 5 and c.shows()


def test_specks_of_colour_on_the_floor_do_not_move_its_median_colour():
    img = _grey()
    img[:, 320::5] = (220, 30, 30)  # every fifth column of the floor red: a fifth of it
    c = _contrast(img, (360, 220, 390, 250))
    assert c.colour < 2  # the floor's median is the grey of the table


def test_only_the_surroundings_off_the_surface_count_as_the_floor():
    """A die on the rim, most of its surroundings on the surface: the floor side is the part
    past the edge, the brown floor, not the grey surface around it."""
    img = _grey()
    img[:, 320:] = (110, 70, 40)
    c = _contrast(img, (295, 220, 325, 250))  # centred 10 px inside the edge
    assert c.colour > 3 * EDGE_MIN_CONTRAST


def test_a_die_two_and_a_half_sizes_from_the_surface_is_compared_and_five_is_not():
    img = _grey()
    near = _contrast(img, (380, 220, 410, 250))  # centre 75 px (2.5 die sizes) past the edge
    assert near is not None and not near.shows()
    assert _contrast(img, (455, 220, 485, 250)) is None  # 5 die sizes: nothing to compare


def test_a_tall_box_is_measured_by_its_longer_side():
    """A die 15 x 30 px (seen from a low camera) 75 px past the edge: 2.5 of its 30 px, so
    compared, though 5 of its 15 px width."""
    tall = _contrast(_grey(), (388, 220, 403, 250))
    assert tall is not None and not tall.shows()


def test_the_shadow_rim_around_another_die_is_left_out_with_the_die():
    """Another die's box is grown by a tenth of its width before it is left out: the dark rim
    of its shadow just outside the box is no grain of the surface."""
    img = _grey()
    img[196:284, 246:314] = 40  # a 4 px shadow around a grey die on the surface
    img[200:280, 250:310] = 150
    die, other = Die(4, (360, 220, 390, 250), 0.9), Die(2, (250, 200, 310, 280), 0.9)
    [c] = edge_contrast(img, Reading(640, 480, [die, other]), [die], LEFT_HALF)
    assert c.colour < 1 and c.texture < 1 and not c.shows()


def test_the_floor_side_is_the_die_s_own_surroundings_out_to_two_sizes():
    """A grey patch of floor a little over 2 die sizes around the die, brown floor beyond it:
    the die lies on floor like the surface, so no edge shows (the brown is beyond its
    surroundings)."""
    img = _grey()
    img[:, 320:] = (110, 70, 40)
    yy, xx = np.mgrid[:480, :640]
    img[(np.hypot(xx - 375, yy - 235) <= 70) & (xx >= 320)] = 150
    c = _contrast(img, (360, 220, 390, 250))  # centre (375, 235), 30 px: 2 sizes = 60 px
    assert c is not None and c.colour < 1 and not c.shows()


def test_the_surface_side_is_a_disc_of_reach_not_the_square_around_it():
    """A die 3.3 sizes past the edge reaches only a sliver of the surface, level with it; the
    surface farther up and down (brown here) lies in the square around the die, not in reach."""
    img = _grey()
    img[:, :320] = (110, 70, 40)
    img[235 - 36 : 235 + 37, :320] = 150  # grey surface only level with the die
    c = _contrast(img, (404, 220, 434, 250))  # centre 99 px past the edge, reach 105 px
    assert c is not None and c.colour < 1 and not c.shows()


def test_a_die_on_the_top_edge_of_the_photo_is_still_left_out():
    img = _grey()
    img[0:30, 280:310] = 20  # a black die on the surface, touching the top of the frame
    die, black = Die(4, (335, 0, 365, 30), 0.9), Die(1, (280, 0, 310, 30), 0.9)
    [c] = edge_contrast(img, Reading(640, 480, [die, black]), [die], LEFT_HALF)
    assert c.colour < 1 and c.texture < 1
    [counted] = edge_contrast(img, Reading(640, 480, [die]), [die], LEFT_HALF)
    assert counted.texture > EDGE_MIN_TEXTURE  # it would be the surface's grain


def test_reach_is_measured_from_the_die_s_centre_and_a_sliver_is_nothing_to_compare():
    # centre 110 px (3.7 sizes of 30 px) past the edge: no surface within 3.5 sizes
    assert _contrast(_grey(), (415, 220, 445, 250)) is None
    # centre 104.75 px past: the surface within reach is a sliver under MIN_PIXELS
    assert _contrast(_grey(), (409.75, 220, 439.75, 250)) is None
    assert _contrast(_grey(), (409, 220, 439, 250)) is not None  # 104 px: enough
