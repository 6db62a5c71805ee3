"""The synthetic roll generator: reproducibility, the dataset contract, labels checked on pixels."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from vision.synth import (
    CLASS_NAMES,
    COCKED_CLASS,
    MIN_VISIBLE,
    make_sample,
    preview_sheet,
    render_scene,
    sample_scene,
    sample_split,
    write_dataset,
)
from vision.synth.labels import top_face
from vision.synth.textures import surface_texture, wall_texture


def test_same_seed_and_index_give_the_same_bytes():
    a = make_sample(11, 4, 256, 192)
    b = make_sample(11, 4, 256, 192)
    assert a.jpeg == b.jpeg
    assert a.image.shape == (192, 256, 3)
    c = make_sample(11, 5, 256, 192)
    assert c.jpeg != a.jpeg


def test_labels_follow_the_simulated_state():
    for index in range(6):
        s = make_sample(2, index, 320, 320)
        lines = s.yolo_lines()
        assert len(lines) == sum(d["labelled"] for d in s.dice)
        for d in s.dice:
            assert d["state"] in ("table", "off_table", "in_air", "cocked")
            assert isinstance(d["moving"], bool)  # still rolling: smeared when the shutter is slow
            if d["class"] == COCKED_CLASS:
                assert d["tilt_deg"] > 12
            else:
                assert d["class"] == d["value"] - 1 and d["tilt_deg"] <= 12
            if d["labelled"]:
                assert d["visible"] >= MIN_VISIBLE
                x1, y1, x2, y2 = d["box"]
                assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 320
                # the pixels drawn for this die lie inside its box (projection and drawing agree)
                vx1, vy1, vx2, vy2 = d["visible_box"]
                assert x1 - 1.5 <= vx1 < vx2 <= x2 + 1.5 and y1 - 1.5 <= vy1 < vy2 <= y2 + 1.5
            else:
                assert (
                    d["box"] is None
                    or d["visible"] < MIN_VISIBLE
                    or min(d["box"][2] - d["box"][0], d["box"][3] - d["box"][1]) < 2
                )
        for line in lines:
            cls, *xywh = line.split()
            assert 0 <= int(cls) <= 6
            assert all(0.0 <= float(v) <= 1.0 for v in xywh)


def test_top_face_reads_the_orientation():
    assert top_face(np.eye(3)) == (1, 0.0)
    flip = np.diag([1.0, -1.0, -1.0])
    assert top_face(flip)[0] == 6
    # rotate +90 degrees about y: local +x points down, local -x up -> 5 on top
    ry = np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]])
    assert top_face(ry)[0] == 5
    a = math.radians(30)
    tilted = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    value, tilt = top_face(tilted)
    assert value == 1 and abs(tilt - 30) < 1e-6


def _count_pips(image: np.ndarray, box: list[float]) -> int:
    """Count dark blobs inside a die's box: nothing from the renderer but the pixels."""
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    crop = cv2.cvtColor(image[y1:y2, x1:x2], cv2.COLOR_BGR2GRAY)
    dark = (crop < 90).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark, connectivity=8)
    side = min(crop.shape)
    min_area = (side * 0.06) ** 2
    return sum(1 for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= min_area)


def test_close_up_pips_match_the_labelled_top_face(one_die_scene):
    """Single white dice seen from straight above: count pips on the image, compare to the label."""
    seen = set()
    for seed in range(14):
        white, black = [240.0, 240.0, 240.0], [20.0, 20.0, 20.0]
        scene = one_die_scene(seed, body=white, pip=black, table_color=[235.0, 235.0, 235.0])
        s = render_scene(scene)
        (die,) = s.dice
        assert die["state"] == "table" and die["labelled"]
        assert _count_pips(s.image, die["box"]) == die["value"], (seed, die)
        seen.add(die["value"])
    assert len(seen) >= 4  # the check covered most faces, not one lucky value


def test_write_dataset_layout_and_workers_match(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    s1 = write_dataset(one, 6, seed=4, workers=1, val_fraction=0.34, size=(160, 128))
    write_dataset(two, 6, seed=4, workers=2, val_fraction=0.34, size=(160, 128))
    assert (s1.train, s1.val) == (4, 2)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert len(files) == 6 * 3 + 1
    for rel in files:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel
    yaml = (one / "data.yaml").read_text()
    assert "train: images/train" in yaml and "val: images/val" in yaml
    assert "\npath:" not in yaml
    for k, name in CLASS_NAMES.items():
        assert f"  {k}: '{name}'" in yaml
    meta_file = next((one / "meta" / "val").glob("*.json"))
    meta = json.loads(meta_file.read_text())
    assert meta["width"] == 160 and meta["height"] == 128
    assert meta["surface_kind"] in ("table", "tray", "box", "board")
    assert meta["outline"] is None or isinstance(meta["outline"], list)
    for key in ("camera", "light", "post", "dice_styles", "surface"):
        assert key in meta["scene"]
    assert meta["camera"]["height"] > 0
    label = one / "labels" / "val" / (meta_file.stem + ".txt")
    n_lines = len(label.read_text().splitlines())
    assert n_lines == sum(d["labelled"] for d in meta["dice"])
    img = cv2.imread(str(one / "images" / "val" / (meta_file.stem + ".jpg")))
    assert img.shape == (128, 160, 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n": 0}, "positive"),
        ({"n": 2, "workers": 0}, "workers"),
        ({"n": 2, "val_fraction": 1.0}, "val_fraction"),
        ({"n": 2, "size": (10, 10)}, "size"),
        ({"n": 2, "face_kind": "dots"}, "face_kind"),
        ({"n": 2, "lean_share": 1.5}, "lean_share"),
        ({"n": 2, "pieces_share": -0.1}, "pieces_share"),
        ({"n": 2, "elevation": (40, 20)}, "elevation"),
        ({"n": 2, "wide_styles": 1.5}, "wide_styles"),
        ({"n": 2, "stone_share": 2.0}, "stone_share"),
        ({"n": 2, "elevation": (0, 20)}, "elevation"),
    ],
)
def test_write_dataset_rejects_bad_arguments(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        write_dataset(tmp_path / "d", **kwargs)
    assert not (tmp_path / "d").exists()


def test_split_is_spread_and_exact():
    splits = [sample_split(i, 0.1) for i in range(100)]
    assert splits.count("val") == 10
    assert splits[:9].count("val") == 0 and splits[9] == "val"


def test_preview_sheet_draws_a_grid():
    sheet = preview_sheet(seed=1, n=3, cols=2, size=(160, 160), tile=100)
    assert sheet.shape[1] == 2 * 104 + 4
    assert sheet.shape[0] == 2 * 104 + 4


def test_face_kind_marks_every_die_of_a_scene_that_way(tmp_path):
    plain = make_sample(3, 1, 160, 120)
    numeral = make_sample(3, 1, 160, 120, face_kind="numeral")
    assert {st["kind"] for st in numeral.meta["scene"]["dice_styles"]} == {"numeral"}
    # the same scene otherwise: dice, poses and labels
    assert [d["class"] for d in numeral.dice] == [d["class"] for d in plain.dice]
    assert "numeral" not in {st["kind"] for st in plain.meta["scene"]["dice_styles"]}
    assert numeral.jpeg != plain.jpeg  # drawn with numerals instead
    with pytest.raises(ValueError, match="expected a face kind in"):
        make_sample(3, 1, 160, 120, face_kind="dots")
    summary = write_dataset(tmp_path / "d", 2, seed=3, size=(128, 96), face_kind="emblem")
    assert summary.images == 2
    for meta in (tmp_path / "d" / "meta").rglob("*.json"):
        kinds = {st["kind"] for st in json.loads(meta.read_text())["scene"]["dice_styles"]}
        assert kinds == {"emblem"}


def test_lean_share_sets_how_many_scenes_get_a_leaning_die():
    leaning = [make_sample(5, i, 160, 120, lean_share=1.0) for i in range(6)]
    never = [make_sample(5, i, 160, 120, lean_share=0.0) for i in range(6)]
    assert all(s.meta["scene"]["throw"]["lean"] for s in leaning)
    assert not any(s.meta["scene"]["throw"]["lean"] for s in never)
    # the leaning die is one die more than the scene throws
    assert all(len(a.dice) == len(b.dice) + 1 for a, b in zip(leaning, never, strict=True))
    cocked = sum(d["state"] == "cocked" for s in leaning for d in s.dice)
    assert cocked > sum(d["state"] == "cocked" for s in never for d in s.dice)
    # the default share draws the same scenes as before the option
    assert make_sample(5, 0, 160, 120).jpeg == make_sample(5, 0, 160, 120, lean_share=None).jpeg


def test_elevation_range_moves_only_the_camera_and_keeps_trays_high_enough():
    kinds = set()
    for i in range(40):
        plain = sample_scene(np.random.default_rng([5, i]), 320, 240)
        low = sample_scene(np.random.default_rng([5, i]), 320, 240, elevation_range=(12, 20))
        elevation = low["camera"].pop("elevation_deg")
        plain["camera"].pop("elevation_deg")
        assert low == plain
        kind = low["surface"]["kind"]
        kinds.add(kind)
        if kind in ("tray", "box"):  # their rims would hide the dice from lower down
            assert 45 <= elevation <= 70
        else:
            assert 12 <= elevation <= 20
    assert {"table", "tray"} <= kinds
    with pytest.raises(ValueError, match="elevation range"):
        sample_scene(np.random.default_rng(0), elevation_range=(30, 95))


def test_wide_styles_change_only_the_dice_colours_pips_and_corners():
    changed = 0
    for i in range(20):
        plain = sample_scene(np.random.default_rng([6, i]), 320, 240)
        wide = sample_scene(np.random.default_rng([6, i]), 320, 240, wide_styles=1.0)
        assert len(wide["dice_styles"]) == len(plain["dice_styles"])
        for w, p in zip(wide["dice_styles"], plain["dice_styles"], strict=True):
            assert (w["kind"], w["opacity"], w["edge_tone"]) == (
                p["kind"],
                p["opacity"],
                p["edge_tone"],
            )
            assert 0.045 <= w["pip_radius"] <= 0.14 and 0.02 <= w["corner"] <= 0.32
            assert all(0 <= v <= 255 for v in (*w["body"], *w["pip"]))
            value = [max(c) / 255 for c in (w["body"], w["pip"])]  # HSV brightness
            assert abs(value[0] - value[1]) >= 0.119  # pips differ from the body by 12% or more
            changed += w["body"] != p["body"]
        wide.pop("dice_styles"), plain.pop("dice_styles")
        assert wide == plain
    assert changed >= 20
    never = sample_scene(np.random.default_rng([6, 0]), 320, 240, wide_styles=0.0)
    assert (
        never["dice_styles"] == sample_scene(np.random.default_rng([6, 0]), 320, 240)["dice_styles"]
    )


def test_stone_share_makes_the_table_top_stone_and_leaves_the_rest_of_the_scene():
    stone = 0
    for i in range(12):
        plain = sample_scene(np.random.default_rng([8, i]), 320, 240)
        rock = sample_scene(np.random.default_rng([8, i]), 320, 240, stone_share=1.0)
        assert rock["surface"]["table_style"] == "stone"
        # finer grains: more texture pixels per unit than the plain scene's table
        assert rock["surface"]["texture_scale"] > plain["surface"]["texture_scale"]
        stone += plain["surface"]["table_style"] == "stone"
        for key in ("table_style", "table_color", "texture_scale"):
            rock["surface"].pop(key), plain["surface"].pop(key)
        assert rock == plain
    assert stone == 0  # never stone by default
    with pytest.raises(ValueError, match="stone_share"):
        sample_scene(np.random.default_rng(0), stone_share=-0.5)


def test_a_stone_texture_is_dense_with_grains_of_other_colours():
    base = (150.0, 150.0, 150.0)
    tex = surface_texture(np.random.default_rng(3), "stone", base, 256)
    plain = surface_texture(np.random.default_rng(3), "plain", base, 256)
    off = np.abs(tex - np.float32(base)).max(axis=2) > 30  # a grain, not the base colour
    assert 0.1 < off.mean() < 0.7
    assert (np.abs(plain - np.float32(base)).max(axis=2) > 30).mean() < 0.01
    # grains are small: most of them are blobs a few pixels wide, not big patches
    n, _, stats, _ = cv2.connectedComponentsWithStats(off.astype(np.uint8), connectivity=4)
    assert n > 200 and np.median(stats[1:, cv2.CC_STAT_AREA]) < 40


def test_tiles_have_grout_lines_both_ways_and_a_wall_a_skirting_board():
    for seed in range(4):
        tiles = surface_texture(np.random.default_rng(seed), "tiles", (200.0, 200.0, 200.0), 256)
        rows, cols = tiles.mean(axis=(1, 2)), tiles.mean(axis=(0, 2))
        assert rows.min() < 0.9 * np.median(rows) and cols.min() < 0.9 * np.median(cols)
        wall = wall_texture(np.random.default_rng(seed), (180.0, 170.0, 160.0))
        assert wall[-3:].std(axis=(0, 1)).max() < 0.01  # one flat board along the floor
        assert wall[:-10].std() > 0.5  # over painted, uneven wall
