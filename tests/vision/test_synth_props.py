"""Flat props on a synthetic table (:mod:`vision.synth.props`): where they are sampled, and how
they are drawn: a coin as a coin only, a sheet that reads from above, the same each time."""

from __future__ import annotations

import numpy as np

from vision.synth.camera import look_at
from vision.synth.props import draw_props, sample_props
from vision.synth.render import Canvas

CAM = look_at(np.array([0.0, 0.0, 30.0]), np.zeros(3), 60.0, 200, 200)  # north up, east right


def test_props_lie_on_the_table_around_the_playing_area():
    rng = np.random.default_rng(8)
    table = near = (30.0, 10.0)  # a long table, played on as a whole
    counts, xs, ys = [], [], []
    for _ in range(400):
        props = sample_props(rng, table, near)
        counts.append(len(props))
        for prop in props:
            x, y = prop["xy"]
            xs.append(x), ys.append(y)
            assert prop["kind"] in ("card", "coin", "sheet")
    assert set(counts) == {0, 1, 2, 3, 4}
    assert 0.35 < counts.count(0) / 400 < 0.55
    assert max(map(abs, xs)) <= table[0] - 3 and max(map(abs, ys)) <= table[1] - 3
    assert max(map(abs, xs)) > 20  # as far out as the long side goes
    assert max(map(abs, ys)) > 6


def _drawn(prop: dict) -> np.ndarray:
    canvas = Canvas.new(CAM)
    draw_props(canvas, [prop])
    return canvas.img


def test_a_coin_is_drawn_as_a_round_coin_the_same_each_time():
    coin = {"kind": "coin", "xy": [2.0, 1.0], "angle_deg": 30.0, "color": [90.0] * 3, "seed": 5}
    img = _drawn(coin)
    ys, xs = np.nonzero(img.max(axis=2) > 0)
    centre = CAM.project(np.array([[2.0, 1.0, 0.004]]))[0]
    px_per_unit = CAM.f / 30.0
    reach = np.hypot(xs - centre[0], ys - centre[1]).max() / px_per_unit
    assert 0.9 < reach < 1.6 + 2 / px_per_unit  # a coin of radius 0.9-1.6 and nothing else
    assert (_drawn(coin) == img).all()


def test_a_score_sheet_reads_from_above():
    """Its first ruled line is twice as far from its top edge as its last from the bottom:
    seen from above with north up, that margin is at the top, so no text is mirrored."""
    sheet = {"kind": "sheet", "xy": [0.0, 0.0], "angle_deg": 0.0, "color": [0.0] * 3, "seed": 2}
    img = _drawn(sheet)
    ys, xs = np.nonzero(img.max(axis=2) > 0)
    inside = img[ys.min() + 2 : ys.max() - 1, xs.min() + 2 : xs.max() - 1, 2]
    blank = inside.min(axis=1) > 200  # rows of bare paper: no line, no writing
    top = int(np.argmin(blank))
    bottom = int(np.argmin(blank[::-1]))
    assert top > bottom + 2, (top, bottom)
    assert (_drawn(sheet) == img).all()
