"""The edge check's measurements at their edges: the bars themselves, a grained table beside a
plain floor, a floor strewn with specks of colour, a die whose surroundings lie partly on the
surface, and how far from the surface a die is still compared."""

from __future__ import annotations

import numpy as np

from vision.table import EDGE_MIN_CONTRAST, EdgeContrast, edge_contrast
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
