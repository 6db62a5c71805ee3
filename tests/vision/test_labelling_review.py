"""The review files a person reads first that mutation testing found untested: the threshold
given to write_review, a photo with no dice as empty cells (not 'None'), the order of the list."""

from __future__ import annotations

import csv
import json

from vision.labelling import LabelledPhoto, review_rows, write_review
from vision.types import Die


def test_write_review_flags_by_the_threshold_given_and_leaves_empty_cells_empty(tmp_path):
    photos = [
        LabelledPhoto("b.jpg", 64, 48, [Die(2, (1, 1, 9, 9), 0.7)]),
        LabelledPhoto("a.jpg", 64, 48, []),
    ]
    csv_path, json_path = write_review(photos, tmp_path, low=0.8)
    with csv_path.open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[1:] == [
        ["a.jpg", "-1", "", "", "", "", "", "", "no_dice"],
        ["b.jpg", "0", "2", "0.7", "1.0", "1.0", "9.0", "9.0", "low_confidence"],
    ]
    listed = json.loads(json_path.read_text())
    assert listed[0]["value"] is None and listed[1]["flags"] == "low_confidence"


def test_the_review_list_runs_from_least_to_most_confident_then_by_photo():
    photos = [
        LabelledPhoto("b.jpg", 64, 48, [Die(1, (1, 1, 9, 9), 0.9), Die(2, (1, 1, 9, 9), 0.3)]),
        LabelledPhoto("a.jpg", 64, 48, [Die(3, (1, 1, 9, 9), 0.9), Die(4, (1, 1, 9, 9), 0.6)]),
        LabelledPhoto("c.jpg", 64, 48, []),
    ]
    got = [(r.photo, r.value) for r in review_rows(photos)]
    assert got == [("c.jpg", None), ("b.jpg", 2), ("a.jpg", 4), ("a.jpg", 3), ("b.jpg", 1)]


def test_a_die_exactly_at_the_threshold_is_not_low():
    photo = LabelledPhoto("a.jpg", 64, 48, [Die(1, (1, 1, 9, 9), 0.5), Die(2, (1, 1, 9, 9), 0.49)])
    assert {r.value: r.flags for r in review_rows([photo], low=0.5)} == {1: "", 2: "low_confidence"}
