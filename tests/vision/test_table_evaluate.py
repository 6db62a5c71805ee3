"""``evaluate_table``: the table logic scored on the true dice of rendered rolls, in all and per
surface kind (table, tray, box, board)."""

from __future__ import annotations

import json

import pytest

from vision.synth import write_dataset
from vision.table import Calibration, TableStage
from vision.table.evaluate import evaluate_table


@pytest.fixture(scope="module")
def rolls(tmp_path_factory):
    # seed 7 from index 150 at 640x480: index 151 has two dice on the floor beside the table
    out = tmp_path_factory.mktemp("rolls")
    write_dataset(out, 6, seed=7, start=150, size=(640, 480), val_fraction=0.99)
    return out


def _resting_off(rolls) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in (rolls / "meta").rglob("*.json"):
        meta = json.loads(path.read_text())
        kind = meta["surface_kind"]
        counts[kind] = counts.get(kind, 0) + sum(
            d["state"] == "off_table" for d in meta["dice"] if d["labelled"] and d["box"]
        )
    return counts


def test_true_outline_counts_each_kind_and_finds_dice_beside_it(rolls):
    report = evaluate_table(rolls, None)
    kinds = report.by_kind()
    assert sum(k["photos"] for k in kinds.values()) == report.counts.images == 6
    expected = _resting_off(rolls)
    assert {k: v["resting_off"] for k, v in kinds.items()} == expected
    assert sum(expected.values()) >= 2
    # the true outline is the ceiling: no IoU to report, and resting off dice are found
    assert all(k["outline_mean_iou"] is None for k in kinds.values())
    found = sum(
        round(k["resting_off_recall"] * k["resting_off"])
        for k in kinds.values()
        if k["resting_off"]
    )
    assert found >= sum(expected.values()) - 1
    text = report.format()
    c = report.counts
    assert c.bust_rolls >= 1 and c.busts_caught >= c.bust_rolls - 1  # the ceiling catches them
    assert "busts caught" in text
    for kind in kinds:
        assert f"  {kind}" in text
    assert report.to_dict()["by_kind"] == kinds


def test_a_boundary_around_the_whole_frame_finds_no_die_off(rolls):
    whole = TableStage(calibration=Calibration([(0, 0), (1, 0), (1, 1), (0, 1)]))
    report = evaluate_table(rolls, whole)
    kinds = report.by_kind()
    assert all(k["resting_off_recall"] in (0.0, None) for k in kinds.values())
    assert report.counts.found_off == 0 and report.false_busts == []
    assert report.counts.bust_rolls >= 1 and report.counts.busts_caught == 0
    assert f"busts caught      0.00%  (0/{report.counts.bust_rolls} photos" in report.format()
    assert all(0.0 <= k["outline_mean_iou"] <= 1.0 for k in kinds.values())


def test_a_photo_missing_beside_its_sidecar_is_named_not_left_out_unseen(tmp_path):
    write_dataset(tmp_path, 2, seed=7, start=150, size=(320, 240), val_fraction=0.99)
    gone = sorted((tmp_path / "images" / "val").glob("*.jpg"))[0]
    gone.unlink()
    whole = TableStage(calibration=Calibration([(0, 0), (1, 0), (1, 1), (0, 1)]))
    report = evaluate_table(tmp_path, whole)
    assert report.counts.images == 1 and report.unreadable == [gone.stem]
    assert f"unreadable        1 photos left out (no image, or not one): {gone.stem}" in (
        report.format()
    )
    assert report.to_dict()["unreadable_photos"] == 1
