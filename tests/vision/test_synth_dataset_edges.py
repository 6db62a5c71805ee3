"""The synthetic YOLO dataset at its edges: a label line's box from the pixel box on a photo
wider than tall, what write_dataset's summary counts, where ``start`` begins, and the
arguments it takes at their limits."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from vision.synth import write_dataset
from vision.synth.sample import Sample, make_sample


def test_a_label_line_is_the_box_centre_and_size_over_the_photo_width_and_height():
    dice = [
        {"labelled": True, "box": [20.0, 10.0, 80.0, 30.0], "class": 3},
        {"labelled": False, "box": [0.0, 0.0, 50.0, 50.0], "class": 0},  # too little shows
        {"labelled": True, "box": [100.0, 50.0, 200.0, 100.0], "class": 6},
    ]
    sample = Sample(image=np.zeros((100, 200, 3), np.uint8), jpeg=b"", dice=dice)
    assert sample.yolo_lines() == [
        "3 0.250000 0.200000 0.300000 0.200000",
        "6 0.750000 0.750000 0.500000 0.500000",
    ]


def test_write_dataset_counts_what_it_wrote_from_start_on(tmp_path: Path):
    done = []
    s = write_dataset(
        tmp_path / "d",
        3,
        seed=5,
        start=7,
        val_fraction=0.5,
        size=(96, 64),
        progress=lambda k, n: done.append((k, n)),
    )
    assert done == [(1, 3), (2, 3), (3, 3)]
    # sample_split(7, 0.5) and (9, 0.5) are val, (8, 0.5) train
    names = {p.stem: p.parent.name for p in (tmp_path / "d" / "images").rglob("*.jpg")}
    assert names == {"synth_s5_000007": "val", "synth_s5_000008": "train", "synth_s5_000009": "val"}
    assert (s.images, s.train, s.val) == (3, 1, 2)
    metas = [json.loads(p.read_text()) for p in sorted((tmp_path / "d" / "meta").rglob("*.json"))]
    assert sorted(m["index"] for m in metas) == [7, 8, 9]
    dice = [d for m in metas for d in m["dice"]]
    assert s.dice == len(dice) and s.labelled == sum(d["labelled"] for d in dice)
    labels = (tmp_path / "d" / "labels").rglob("*.txt")
    assert s.labelled == sum(len(p.read_text().splitlines()) for p in labels)
    assert s.states == dict(sorted(Counter(d["state"] for d in dice).items()))
    photo = tmp_path / "d" / "images" / "train" / "synth_s5_000008.jpg"
    assert photo.read_bytes() == make_sample(5, 8, 96, 64).jpeg  # index 8 of seed 5, not 1


def test_write_dataset_takes_its_arguments_at_their_limits(tmp_path: Path):
    s = write_dataset(
        tmp_path / "d",
        1,
        val_fraction=0.0,
        size=(64, 64),
        lean_share=1.0,
        pieces_share=0.0,
        wide_styles=1.0,
        stone_share=1.0,
    )
    assert (s.images, s.train, s.val) == (1, 1, 0)


@pytest.mark.parametrize("size", [(100, 10), (100, 5000), (63, 100)])
def test_write_dataset_refuses_a_side_out_of_range(tmp_path: Path, size):
    with pytest.raises(ValueError, match=f"got {size[0]}x{size[1]}"):
        write_dataset(tmp_path / "d", 1, size=size)
    assert not (tmp_path / "d").exists()


def test_write_dataset_refuses_a_file_as_its_folder_and_keeps_it(tmp_path: Path):
    out = tmp_path / "d"
    out.write_text("mine")
    with pytest.raises(ValueError, match=f"output must be a folder, but {out} is a file"):
        write_dataset(out, 1, size=(64, 64))
    assert out.read_text() == "mine"
