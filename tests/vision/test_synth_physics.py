"""Where the synthetic scenes' dice land (vision.synth.physics, a real pybullet simulation):
resting flat on the table, on the floor past its edge, held in a tray by its rims, in the air
when caught early, leaning on a die or a rim when propped."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vision.synth.labels import COCKED_TILT_DEG, die_corners, die_state, top_face
from vision.synth.physics import DiePose, Surface, simulate

TABLE = Surface("table", (10.0, 8.0), 40.0)
TRAY = Surface("tray", (20.0, 15.0), 40.0, interior=(4.0, 3.0), rim=(2.0, 0.5))


def _throw(**changes) -> dict:
    throw = {
        "origin": (0.0, 0.0),
        "velocity": (0.0, 0.0),
        "spread": 0.5,
        "spin": 5.0,
        "height": 2.0,
        "catch_step": None,
        "lean": False,
    }
    return throw | changes


def _state(pose: DiePose, surface: Surface) -> str:
    return die_state(pose, surface, top_face(pose.rotation)[1])


def test_rim_boxes_wall_in_the_interior_exactly_and_a_bare_table_has_none():
    ix, iy, (h, t) = 4.0, 3.0, TRAY.rim
    boxes = TRAY.rim_boxes()
    assert all(
        hz == pytest.approx(h / 2) and cz == pytest.approx(h / 2) for (_, _, cz), (*_, hz) in boxes
    )
    assert all(2 * max(hx, hy) <= 2.0 + 1e-9 for _, (hx, hy, _) in boxes)  # segments of 2 or less

    def walls(x: float, y: float) -> int:
        return sum(abs(x - cx) < hx and abs(y - cy) < hy for (cx, cy, _), (hx, hy, _) in boxes)

    grid = np.linspace(-6.0, 6.0, 97) + 0.0123  # off every box edge
    for x, y in itertools.product(grid, grid):
        inside = abs(x) < ix and abs(y) < iy
        within_rim = abs(x) < ix + t and abs(y) < iy + t
        assert walls(x, y) == (0 if inside or not within_rim else 1), (x, y)
    assert TABLE.rim_boxes() == []
    assert Surface("tray", (20.0, 15.0), 40.0, interior=(4.0, 3.0)).rim_boxes() == []


def test_the_playing_surface_is_the_tray_inside_and_a_die_beside_the_tray_is_off_it():
    assert TRAY.play == (4.0, 3.0) and TABLE.play == (10.0, 8.0)
    flat = np.eye(3)
    beside = DiePose(np.array([6.0, 0.0, 0.5]), flat, 1.0, in_contact=True, moving=False)
    inside = DiePose(np.array([3.0, 2.0, 0.5]), flat, 1.0, in_contact=True, moving=False)
    assert die_state(beside, TRAY, 0.0) == "off_table"
    assert die_state(inside, TRAY, 0.0) == "table"


def test_dice_at_rest_lie_flat_on_the_table_top_and_keep_their_size():
    for seed in range(3):
        sizes = [1.0, 1.3]
        poses = simulate(TABLE, sizes, _throw(), seed)
        assert [p.size for p in poses] == pytest.approx(sizes)
        for pose, size in zip(poses, sizes, strict=True):
            r = pose.rotation
            assert r @ r.T == pytest.approx(np.eye(3), abs=1e-6) and np.linalg.det(r) > 0
            z = die_corners(pose)[:, 2]
            assert z.min() == pytest.approx(0.0, abs=0.03) and z.max() == pytest.approx(
                size, abs=0.03
            )
            assert top_face(r)[1] < 1.0
            assert pose.in_contact and not pose.moving and _state(pose, TABLE) == "table"


def test_a_die_dropped_past_the_table_edge_lands_on_the_floor_and_one_inside_stays_on():
    tx = TABLE.table[0]
    for seed in range(3):
        (past,) = simulate(TABLE, [1.0], _throw(origin=(tx + 2.0, 0.0), spread=0.0), seed)
        (near,) = simulate(TABLE, [1.0], _throw(origin=(tx - 3.0, 0.0), spread=0.0), seed)
        assert die_corners(past)[:, 2].min() == pytest.approx(-TABLE.table_height, abs=0.03)
        assert not past.moving and np.linalg.norm(past.velocity) < 0.3  # at rest on the floor
        assert _state(past, TABLE) == "off_table"
        assert die_corners(near)[:, 2].min() == pytest.approx(0.0, abs=0.03)
        assert _state(near, TABLE) == "table"


def test_a_trays_rims_keep_dice_thrown_low_at_them_inside():
    throw = _throw(velocity=(40.0, 0.0), height=0.6, spread=0.3)
    rimless = Surface("tray", TRAY.table, TRAY.table_height, interior=TRAY.interior)
    out = 0
    for seed in range(3):
        for pose in simulate(TRAY, [1.0] * 3, throw, seed):
            assert abs(pose.position[0]) < 4.0 and abs(pose.position[1]) < 3.0
            assert _state(pose, TRAY) in ("table", "cocked")
        out += sum(
            _state(p, rimless) == "off_table" for p in simulate(rimless, [1.0] * 3, throw, seed)
        )
    assert out >= 3  # the same throw without rims leaves the tray


def test_dice_caught_early_are_high_in_the_air_and_moving_and_settled_ones_are_still():
    for seed in range(3):
        for pose in simulate(TABLE, [1.0] * 3, _throw(catch_step=2, height=8.0, spread=2.0), seed):
            assert pose.position[2] > 7.0 and pose.moving and not pose.in_contact
            assert _state(pose, TABLE) == "in_air"
        settled = simulate(TABLE, [1.0] * 3, _throw(spin=30.0, height=6.0, spread=2.0), seed)
        assert all(not p.moving and np.linalg.norm(p.velocity) < 0.5 for p in settled)


def test_a_die_at_rest_on_top_of_another_is_in_contact_and_not_in_the_air():
    throw = _throw(spread=0.0, spin=0.0, height=0.6)
    for seed in (3, 5, 6):  # seeds where the second die lands on the first
        below, above = simulate(TABLE, [1.0, 1.0], throw, seed)
        assert above.position[2] == pytest.approx(1.5, abs=0.05)
        assert above.in_contact and not above.moving and _state(above, TABLE) == "table"
        assert _state(below, TABLE) == "table"


def test_dice_go_the_way_they_are_thrown():
    for seed in range(3):
        right = simulate(TABLE, [1.0] * 3, _throw(origin=(-6.0, 0.0), velocity=(30.0, 0.0)), seed)
        left = simulate(TABLE, [1.0] * 3, _throw(origin=(6.0, 0.0), velocity=(-30.0, 0.0)), seed)
        assert np.mean([p.position[0] for p in right]) > -4.0
        assert np.mean([p.position[0] for p in left]) < 4.0


def test_the_same_seed_gives_the_same_poses_and_another_seed_others():
    throw = _throw(velocity=(20.0, 5.0), spin=20.0, lean=True)
    a, b = (simulate(TABLE, [1.0] * 4, throw, 7) for _ in range(2))
    simulate(TRAY, [1.2] * 2, throw, 3)  # another scene in between changes nothing
    c = simulate(TABLE, [1.0] * 4, throw, 7)
    other = simulate(TABLE, [1.0] * 4, throw, 8)
    for x, y, z in zip(a, b, c, strict=True):
        assert np.array_equal(x.position, y.position) and np.array_equal(x.position, z.position)
        assert np.array_equal(x.rotation, y.rotation)
    assert not np.allclose([p.position for p in a], [p.position for p in other])


def test_a_propped_die_leans_cocked_on_its_neighbour_showing_any_face():
    cocked, values = 0, set()
    for seed in range(6):
        first, leaning = simulate(TABLE, [1.0, 1.0], _throw(lean=True), seed)
        assert leaning.in_contact and not leaning.moving
        assert np.linalg.norm(leaning.position[:2] - first.position[:2]) < 1.5
        value, tilt = top_face(leaning.rotation)
        cocked += tilt > COCKED_TILT_DEG and _state(leaning, TABLE) == "cocked"
        values.add(value)
    assert cocked >= 5
    assert len(values) >= 3


def test_a_propped_die_leans_cocked_on_a_rim_when_no_die_rests_in_the_tray():
    cocked = 0
    ix, iy = TRAY.interior
    for seed in range(6):
        thrown, leaning = simulate(TRAY, [1.0, 1.0], _throw(origin=(30.0, 0.0), lean=True), seed)
        assert _state(thrown, TRAY) == "off_table"  # on the floor: nothing to lean on
        x, y, _ = leaning.position
        assert abs(x) < ix and abs(y) < iy
        assert min(ix - abs(x), iy - abs(y)) < 1.0  # against a rim
        cocked += _state(leaning, TRAY) == "cocked"
    assert cocked >= 4


def test_in_a_tray_a_propped_die_leans_sometimes_on_a_rim_and_sometimes_on_a_die():
    on_rim = on_die = 0
    ix, iy = TRAY.interior
    for seed in range(10):
        first, leaning = simulate(TRAY, [1.0, 1.0], _throw(lean=True), seed)
        x, y, _ = leaning.position
        apart = np.linalg.norm(leaning.position[:2] - first.position[:2])
        on_die += apart < 1.5
        on_rim += apart > 1.8 and min(ix - abs(x), iy - abs(y)) < 1.0
    assert on_die >= 3 and on_rim >= 1


def _boxes_overlap(a: DiePose, b: DiePose) -> bool:
    """Separating-axis test of two dice (cubes): True where they share volume."""
    t = b.position - a.position
    axes = [*a.rotation.T, *b.rotation.T]
    axes += [np.cross(u, v) for u in a.rotation.T for v in b.rotation.T]
    for axis in axes:
        if np.linalg.norm(axis) < 1e-9:
            continue
        reach = sum(pose.size / 2 * np.abs(pose.rotation.T @ axis).sum() for pose in (a, b))
        if abs(t @ axis) > reach:
            return False
    return True


def test_thrown_dice_start_apart_within_the_throws_spread():
    rng = np.random.default_rng(5)
    for seed in range(150):
        n, spread, height = int(rng.integers(2, 14)), float(rng.uniform(0.8, 3.0)), 2.0
        sizes = [float(s) for s in rng.uniform(0.8, 1.5, n)]
        throw = _throw(origin=(1.0, -2.0), spread=spread, height=height, catch_step=0)
        poses = simulate(TRAY if seed % 2 else TABLE, sizes, throw, seed)  # not stepped yet
        for (i, a), (j, b) in itertools.combinations(enumerate(poses), 2):
            assert not _boxes_overlap(a, b), (seed, i, j, a.position, b.position)
        for i, pose in enumerate(poses):
            x, y, z = pose.position
            assert abs(x - 1.0) <= spread and abs(y + 2.0) <= spread
            assert z >= height + 0.78 * i
