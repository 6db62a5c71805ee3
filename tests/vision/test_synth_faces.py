"""Die faces as :mod:`vision.synth.textures` draws them, read back from their pixels: the pip
layouts of 1 to 6, numerals that read as their value, the emblem on the 1 only, and pips that
stay opaque on a see-through die."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.textures import face_texture

S = 64  # the renderer's face size
BLACK, WHITE, RED = (0.0, 0.0, 0.0), (255.0, 255.0, 255.0), (40.0, 40.0, 230.0)


def _ink(value: int, kind: str = "pips", **kwargs) -> np.ndarray:
    """Where the face is inked: drawn white on black, bevel or not, ink is the bright part."""
    return face_texture(value, BLACK, WHITE, kind=kind, size=S, **kwargs)[..., 0] > 100


def _pips(value: int) -> np.ndarray:
    """Centres of the pips of a face, in face units (0..1, x right, y down), sorted."""
    n, _, stats, centres = cv2.connectedComponentsWithStats(_ink(value).astype(np.uint8))
    assert all(stats[1:, cv2.CC_STAT_AREA] > 10), stats  # real pips, no specks
    return np.array(sorted(((x + 0.5) / S, (y + 0.5) / S) for x, y in centres[1:]))


@pytest.mark.parametrize("value", range(1, 7))
def test_a_face_has_as_many_pips_as_its_value_laid_out_as_on_a_real_die(value):
    pips = _pips(value)
    assert len(pips) == value
    off = pips - 0.5
    # every face of a real die looks the same turned half a turn
    assert np.abs(np.array(sorted(map(tuple, -off))) - off).max() < 1.5 / S
    far = np.abs(off).max(axis=1)
    assert (far < 0.35).all()  # clear of the rounded edge
    corner = np.isclose(np.abs(off[:, 0]), np.abs(off[:, 1]), atol=1.5 / S) & (far > 0.15)
    centre = far < 1.5 / S
    if value in (1, 3, 5):
        assert centre.sum() == 1
    else:
        assert not centre.any()
    if value in (2, 3):  # corners on one diagonal
        ends = off[corner]
        signs = np.sign(ends[:, 0] * ends[:, 1])  # + on one diagonal, - on the other
        assert len(ends) == 2 and signs[0] == signs[1]
    if value in (4, 5):  # the four corners of a square
        assert corner.sum() == 4 and len({tuple(np.sign(p)) for p in off[corner]}) == 4
    if value == 6:  # two rows of three along two opposite sides, evenly spaced
        assert corner.sum() == 4
        mids = off[~corner]
        assert len(mids) == 2
        side = int(np.argmax(np.abs(mids[0])))  # the axis the middle pips stand out on
        assert np.allclose(mids[:, 1 - side], 0.0, atol=1.5 / S)
        reach = np.abs(off[corner][:, side])
        assert np.allclose(np.abs(mids[:, side]), reach.mean(), atol=1.5 / S)
    # all pips equal: the same size of ink each
    sizes = cv2.connectedComponentsWithStats(_ink(value).astype(np.uint8))[2][1:, 4]
    assert sizes.max() - sizes.min() <= 0.1 * sizes.max()


@pytest.mark.parametrize("radius", [0.06, 0.1, 0.14])
def test_pips_are_round_and_as_wide_as_the_style_says(radius):
    tex = face_texture(4, BLACK, WHITE, size=S, pip_radius=radius)[..., 0] / 255.0
    n, labels, stats, _ = cv2.connectedComponentsWithStats((tex > 0.5).astype(np.uint8))
    for k in range(1, n):
        ink = tex[labels == k].sum() + tex[(labels == 0) & (tex > 0)].sum() / (n - 1)
        assert np.sqrt(ink / np.pi) == pytest.approx(radius * S, abs=1.0), (radius, k)
        w, h = stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT]
        assert abs(w - h) <= 1


def test_all_four_corners_of_a_face_are_rounded_alike():
    for corner in (0.1, 0.18, 0.3):
        alpha = face_texture(1, WHITE, BLACK, size=256, corner=corner, opacity=0.5)[..., 3]
        r = int(corner * 256)
        patches = [alpha[:r, :r], alpha[:r, -r:], alpha[-r:, :r], alpha[-r:, -r:]]
        sums = [float(p.sum()) for p in patches]
        assert max(sums) - min(sums) < 0.12 * max(sums), (corner, sums)
        assert alpha[0, 0] == 0.0 and alpha[r // 4, r // 4] == 0.0  # cut off round
        assert alpha[r, r] == pytest.approx(0.5)


def _glyph(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    crop = mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].astype(np.float32)
    return cv2.resize(crop, (24, 32), interpolation=cv2.INTER_AREA)


def _read_digit(mask: np.ndarray) -> int:
    """The digit 1-6 a glyph looks most like, by templates in another of cv2's fonts."""
    scores = {}
    for d in range(1, 7):
        im = np.zeros((80, 80), np.uint8)
        cv2.putText(im, str(d), (15, 65), cv2.FONT_HERSHEY_SIMPLEX, 2.0, 255, 4)
        scores[d] = float(np.abs(_glyph(im > 0) - _glyph(mask)).mean())
    return min(scores, key=scores.get)


def _main_glyph(mask: np.ndarray) -> np.ndarray:
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
    return labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))


@pytest.mark.parametrize("value", range(1, 7))
def test_a_numeral_face_reads_as_its_value_centred_on_the_face(value):
    ink = _ink(value, "numeral")
    assert _read_digit(_main_glyph(ink)) == value
    ys, xs = np.nonzero(ink)
    assert abs((xs.min() + xs.max() + 1) / 2 - S / 2) <= 2
    assert abs((ys.min() + ys.max() + 1) / 2 - S / 2) <= 3
    assert xs.min() >= 0.09 * S and ys.min() >= 0.09 * S  # clear of the bevelled edges
    assert xs.max() < 0.91 * S and ys.max() < 0.91 * S
    inside = face_texture(value, BLACK, WHITE, kind="numeral", corner=0.32)[..., 3] == 1.0
    assert inside[ink].all()  # and of the roundest corners


def test_the_numeral_six_is_underlined_so_it_is_not_read_upside_down_as_a_nine():
    six = _ink(6, "numeral")
    glyph = _main_glyph(six)
    bar = six & ~glyph
    assert bar.any(), "no mark under the 6"
    ys, xs = np.nonzero(bar)
    assert ys.min() > np.nonzero(glyph)[0].max()  # below the digit, apart from it
    assert xs.max() - xs.min() >= 0.25 * S and ys.max() - ys.min() <= 0.08 * S  # a bar
    for value in range(1, 6):
        ink = _ink(value, "numeral")
        assert (ink == _main_glyph(ink)).all(), value  # one glyph, nothing under it


def test_an_emblem_die_has_a_large_emblem_in_its_colour_on_the_1_and_pips_elsewhere():
    one = face_texture(1, WHITE, BLACK, kind="emblem", emblem=RED)
    emblem = np.abs(one[..., :3] - np.float32(RED)).max(axis=2) < 40
    assert emblem.mean() > 0.12  # far bigger than a pip
    assert emblem[S // 2, S // 2] and not emblem[3 * S // 4, 3 * S // 4]
    plain_one = face_texture(1, WHITE, BLACK, kind="pips")
    assert (np.abs(plain_one[..., :3] - np.float32(RED)).max(axis=2) < 40).sum() == 0
    for value in range(2, 7):
        drawn = face_texture(value, WHITE, BLACK, kind="emblem", emblem=RED)
        assert (drawn == face_texture(value, WHITE, BLACK, kind="pips")).all(), value


def test_a_see_through_die_has_opaque_pips_and_no_face_outside_its_rounded_corners():
    tex = face_texture(5, WHITE, BLACK, opacity=0.4, corner=0.18)
    alpha = tex[..., 3]
    assert alpha[S // 2, S // 2] == pytest.approx(1.0)  # the centre pip
    assert alpha[S // 2, S // 8] == pytest.approx(0.4)  # bare body between pips
    assert alpha[0, 0] == 0.0 and alpha[0, -1] == 0.0 and alpha[-1, 0] == 0.0
    assert alpha[-1, -1] == 0.0
    assert alpha[0, S // 2] > 0.3 and alpha[S // 2, -1] > 0.3  # the sides reach the edge
    # the body is darker towards the edges (bevel), flat across the middle
    body = tex[..., 2]
    assert body[S // 2, 0] < 0.8 * body[S // 2, S // 8 + 4]
