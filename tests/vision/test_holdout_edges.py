"""The fine-tuning split (:mod:`vision.train.holdout`) at its edges: the seed, and the check
that every new photo, held out or not, can be read before training starts."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.train.holdout import SplitError, check_photos, split_dataset

from dicecam_testing.folders import yolo_folder


def _names(part: Path) -> set[str]:
    return {p.stem.split("_", 1)[1] for p in (part / "images").iterdir()}


def test_the_same_seed_splits_and_draws_the_same_and_another_seed_otherwise(tmp_path: Path):
    new = yolo_folder(tmp_path / "new", [f"new{i:02d}" for i in range(30)])
    old = yolo_folder(tmp_path / "old", [f"old{i:02d}" for i in range(20)])

    def split(seed: int, out: str) -> tuple[set[str], set[str], set[str]]:
        s = split_dataset(
            [new], tmp_path / out, holdout=0.2, replay=[old], replay_n=4, known_n=2, seed=seed
        )
        return _names(s.heldout), _names(s.replay), _names(s.known)

    first, again, other = split(0, "a"), split(0, "b"), split(1, "c")
    assert first == again  # a run repeated holds out and replays the same photos
    assert first[0] != other[0]  # --seed draws another held-out part
    assert first[1] != other[1]  # and another replay sample
    assert all(len(part) == n for part, n in zip(other[1:], (4, 2), strict=True))


def _photo(path: Path) -> None:
    cv2.imwrite(str(path), np.full((80, 96, 3), 200, np.uint8))


def test_a_held_out_photo_that_is_not_an_image_is_named_before_training(tmp_path: Path):
    data = yolo_folder(tmp_path / "data", [f"p{i}" for i in range(5)])
    for jpg in (data / "images").iterdir():
        _photo(jpg)
    split = split_dataset([data], tmp_path / "split", holdout=0.2, replay=[])
    check_photos(split)  # every photo reads
    (held,) = (split.heldout / "images").iterdir()
    held.resolve().write_bytes(b"not a photo")  # the player's photo, reached through the link
    with pytest.raises(SplitError, match="got 1 it cannot") as err:
        check_photos(split)
    assert str(held.resolve()) in str(err.value)  # the player's photo, not the split's link
    assert str(split.heldout) not in str(err.value)


def test_photos_that_cannot_be_read_are_counted_and_three_of_them_named(tmp_path: Path):
    data = yolo_folder(tmp_path / "data", [f"p{i}" for i in range(5)])  # none is a JPEG
    split = split_dataset([data], tmp_path / "split", holdout=0.4, replay=[])
    with pytest.raises(SplitError) as err:
        check_photos(split)
    message = str(err.value)
    assert message.startswith("expected photos training can read, got 5 it cannot: ")
    assert message.endswith(" (and 2 more)") and message.count(str(data / "images")) == 3


@pytest.mark.parametrize("part", ["heldout", "replay", "known"])
def test_photos_in_any_part_a_split_empties_are_refused_and_kept(tmp_path: Path, part: str):
    out = tmp_path / "split"
    mine = yolo_folder(out / part / "my-dice", [f"mine{i}" for i in range(4)])
    old = yolo_folder(tmp_path / "old", ["old0"])
    for data, replay in (([mine], [old]), ([old], [mine])):
        with pytest.raises(SplitError, match=f"got {mine}: copy them elsewhere"):
            split_dataset(data, out, holdout=0.3, replay=replay)
    assert len(list((mine / "images").iterdir())) == 4  # the photos are still there


def test_one_labelled_photo_is_refused_as_too_few_to_hold_one_out(tmp_path: Path):
    one = yolo_folder(tmp_path / "one", ["only"])
    with pytest.raises(SplitError, match=f"at least 2 labelled photos .* in {one}, found 1"):
        split_dataset([one], tmp_path / "split", replay=[])
    assert not (tmp_path / "split").exists()


def test_a_label_file_of_blank_lines_is_neither_replayed_nor_known(tmp_path: Path):
    new = yolo_folder(tmp_path / "new", ["n0", "n1"])
    old = yolo_folder(tmp_path / "old", ["dice", "blank"])
    (old / "labels" / "blank.txt").write_text("\n  \n")  # no die labelled
    split = split_dataset([new], tmp_path / "split", replay=[old], replay_n=5, known_n=5)
    assert _names(split.replay) == {"dice"} and not (split.known / "images").exists()
