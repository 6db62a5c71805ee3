"""Sampling a synthetic scene (:func:`vision.synth.scene.sample_scene`): the dice count, where a
throw starts, trays and boards that fit their table, the cameras that see into a tray, the mix
of face kinds, and the scene options that draw nothing from the caller's stream."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.synth.scene import die_style, sample_scene


def _scenes(seed: int, n: int, **options) -> list[dict]:
    return [sample_scene(np.random.default_rng([seed, i]), 320, 240, **options) for i in range(n)]


SCENES = _scenes(31, 500)


def test_a_scene_throws_1_to_13_dice_and_every_count_comes_up():
    counts = [s["n_dice"] for s in SCENES]
    assert set(counts) == set(range(1, 14))
    for s in SCENES:  # one size per die, and one more for the die leaning on another
        assert len(s["dice_sizes"]) == s["n_dice"] + s["throw"]["lean"]


def test_the_camera_sees_into_a_tray_or_box_from_45_degrees_up_at_least():
    kinds = set()
    for s in SCENES:
        elevation, kind = s["camera"]["elevation_deg"], s["surface"]["kind"]
        kinds.add(kind)
        assert 25 <= elevation <= 90
        if kind in ("tray", "box"):  # their rims hide the dice from lower down
            assert elevation >= 45, (kind, elevation)
    assert kinds == {"table", "tray", "box", "board"}
    low = [s for s in SCENES if s["camera"]["elevation_deg"] < 45]
    assert len(low) > 50  # a table or board is seen from low down too


def test_trays_boxes_and_boards_fit_on_their_table():
    for s in SCENES:
        surface = s["surface"]
        tx, ty = surface["table"]
        if surface["interior"] is not None:
            ix, iy = surface["interior"]
            assert 5 <= ix <= tx - 3 and 4 <= iy <= ty - 3, surface
            assert ix + surface["rim"][1] < tx and iy + surface["rim"][1] < ty
        if surface["kind"] == "board":
            bx, by = surface["board"][:2]
            assert 6 <= bx <= tx - 1 and 6 <= by <= ty - 1, surface


def test_a_throw_starts_inside_the_playing_surface_and_a_hard_one_goes_for_its_edge():
    hard = soft = 0
    for s in SCENES:
        surface, throw = s["surface"], s["throw"]
        px, py = surface["interior"] or surface["table"]  # the tray's inside, if any
        (ox, oy), (vx, vy) = throw["origin"], throw["velocity"]
        speed = math.hypot(vx, vy)
        if speed >= 50:  # thrown hard: from halfway out, towards the edge it is thrown at
            hard += 1
            assert math.isclose(ox, 0.5 * px * vx / speed, abs_tol=1e-9), (ox, px, vx)
            assert math.isclose(oy, 0.5 * py * vy / speed, abs_tol=1e-9), (oy, py, vy)
        else:  # from at most 35% out on the far side, across the middle
            soft += 1
            assert abs(ox) <= 0.35 * px + 1e-9 and abs(oy) <= 0.35 * py + 1e-9, (s["surface"], ox)
            assert ox * vx + oy * vy <= 1e-9
    assert hard > 40 and soft > 300


def test_about_8_percent_of_dice_styles_are_numerals_and_8_percent_emblems():
    rng = np.random.default_rng(5)
    kinds = [die_style(rng)["kind"] for _ in range(4000)]
    assert 0.06 < kinds.count("numeral") / 4000 < 0.10
    assert 0.06 < kinds.count("emblem") / 4000 < 0.10


def test_a_face_kind_marks_every_style_of_a_mixed_scene_and_its_wide_styles_too():
    mixed = [i for i, s in enumerate(SCENES[:60]) if len(s["dice_styles"]) > 1]
    assert len(mixed) >= 5
    for i in mixed[:5]:
        rng = np.random.default_rng([31, i])
        scene = sample_scene(rng, 320, 240, face_kind="emblem")
        assert [st["kind"] for st in scene["dice_styles"]] == ["emblem"] * len(scene["dice_styles"])
    for i in range(6):
        wide = sample_scene(np.random.default_rng([31, i]), 320, 240, wide_styles=1.0)
        both = sample_scene(
            np.random.default_rng([31, i]), 320, 240, wide_styles=1.0, face_kind="numeral"
        )
        assert {st["kind"] for st in both["dice_styles"]} == {"numeral"}
        for a, b in zip(wide["dice_styles"], both["dice_styles"], strict=True):
            assert {**a, "kind": "numeral"} == b  # the same wide colours, numerals on them


def test_the_scene_options_draw_nothing_from_the_callers_stream():
    """Every option draws on a stream of its own: the caller's generator is left where the
    plain scene leaves it, so whatever it draws next is the same with or without them."""
    plain = np.random.default_rng(17)
    sample_scene(plain, 320, 240)
    after = plain.random(4)
    options = [
        {"stone_share": 1.0},
        {"wide_styles": 1.0},
        {"pieces_share": 1.0},
        {"elevation_range": (20.0, 30.0)},
        {"lean_share": 0.3, "face_kind": "pips"},
    ]
    for option in options:
        rng = np.random.default_rng(17)
        sample_scene(rng, 320, 240, **option)
        assert (rng.random(4) == after).all(), option


def test_overrides_replace_a_top_level_key_after_drawing():
    plain = sample_scene(np.random.default_rng(3), 320, 240)
    fixed = sample_scene(np.random.default_rng(3), 320, 240, physics_seed=42, n_dice=2)
    assert (fixed["physics_seed"], fixed["n_dice"]) == (42, 2)
    # drawn as before: the other parameters, and those of the own streams (seeded by the
    # physics seed drawn, not the override)
    fixed.update(physics_seed=plain["physics_seed"], n_dice=plain["n_dice"])
    assert fixed == plain


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"wide_styles": 1.5}, r"expected wide_styles in \[0, 1\], got 1.5"),
        ({"wide_styles": -0.1}, r"expected wide_styles in \[0, 1\], got -0.1"),
        ({"stone_share": 1.01}, r"expected stone_share in \[0, 1\], got 1.01"),
        ({"face_kind": "dots"}, r"expected a face kind in .*, got 'dots'"),
        ({"elevation_range": (50.0, 40.0)}, r"5 <= LO <= HI <= 90 degrees, got \(50.0, 40.0\)"),
    ],
)
def test_sample_scene_refuses_an_option_out_of_range_naming_it(option, message):
    with pytest.raises(ValueError, match=message):
        sample_scene(np.random.default_rng(0), 320, 240, **option)
