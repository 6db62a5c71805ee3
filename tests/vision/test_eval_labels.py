"""dicecam eval on odd label files and folders: a clear error or the right figures, never a
silent miscount (found by checking the figures against an evaluator written apart)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from vision.evaluate import DatasetError, evaluate_dataset, load_labels
from vision.io import ImageError
from vision.types import Die, Reading


def _photo(root: Path, rel: str, labels: str | None, size: tuple[int, int] = (200, 100)) -> Path:
    image = root / rel
    image.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (90, 90, 90)).save(image)
    if labels is not None:
        label = (root / rel.replace("images", "labels", 1)).with_suffix(".txt")
        label.parent.mkdir(parents=True, exist_ok=True)
        label.write_text(labels)
    return image


class _Fixed:
    """Reads, for each photo stem, the dice given (value, box)."""

    def __init__(self, dice: dict[str, list[tuple[int, tuple[float, float, float, float]]]]):
        self.dice = dice
        self.read_photos: list[str] = []

    def read(self, image: object, *, expected_dice: int | None = None) -> Reading:
        path = Path(str(image))
        self.read_photos.append(path.stem)
        with Image.open(path) as im:
            w, h = im.size
        return Reading(w, h, [Die(v, b, 0.9) for v, b in self.dice.get(path.stem, [])])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("0 100 50 20 20", "expected coordinates normalised to 0-1"),  # pixels, not fractions
        ("0 1.5 0.5 0.1 0.1", "expected coordinates normalised to 0-1"),
        ("0 0.5 0.5 1.5 0.1", "expected coordinates normalised to 0-1"),
        ("2.5 0.5 0.5 0.1 0.1", "expected a whole class number 0 or more, got '2.5'"),
        ("-1 0.5 0.5 0.1 0.1", "expected a whole class number 0 or more, got '-1'"),
    ],
)
def test_labels_out_of_range_or_odd_classes_are_refused(tmp_path: Path, line: str, message: str):
    # these were counted: a die in pixel coordinates lies outside the photo (missed, recall 0),
    # class 2.5 was read as class 2 (face 3)
    _photo(tmp_path, "images/x.png", line + "\n")
    reader = _Fixed({"x": [(1, (90.0, 40.0, 110.0, 60.0))]})
    with pytest.raises(DatasetError, match=rf"x\.txt:1: {message}"):
        evaluate_dataset(tmp_path, reader=reader)


def test_labels_at_the_edges_of_the_photo_are_kept(tmp_path: Path):
    image = _photo(tmp_path, "images/x.png", "5 0.05 0.95 0.1 0.1\n0 1.0004 0.5 0.0 1e-3\n")
    with pytest.raises(DatasetError, match="positive width"):  # the slack is for rounding only
        load_labels(image)
    image = _photo(tmp_path, "images/x.png", "5 0.05 0.95 0.1 0.1\n0 1.0004 0.5 0.1 1.0\n")
    assert [c for c, *_ in load_labels(image).labels] == [5, 0]


def test_a_class_out_of_range_names_its_label_file_before_any_photo_is_read(tmp_path: Path):
    # it stopped the run at that photo, minutes into a real set, naming neither file nor line
    _photo(tmp_path, "images/a.png", "0 0.5 0.5 0.1 0.2\n")
    _photo(tmp_path, "images/b.png", "0 0.5 0.5 0.1 0.2\n7 0.2 0.2 0.1 0.2\n")
    reader = _Fixed({})
    with pytest.raises(DatasetError, match=r"b\.txt: die 2: expected label classes 0-5 .*class 7"):
        evaluate_dataset(tmp_path, reader=reader)
    assert reader.read_photos == []


def test_photos_in_subfolders_of_images_are_read_and_a_missing_split_is_named(tmp_path: Path):
    # images/batch1/, images/batch2/ was refused: "expected a data.yaml, or a folder with images/"
    _photo(tmp_path, "images/batch1/x.png", "0 0.5 0.5 0.1 0.2\n")
    _photo(tmp_path, "images/batch2/y.png", "1 0.5 0.5 0.1 0.2\n")
    reader = _Fixed({"x": [(1, (90.0, 40.0, 110.0, 60.0))], "y": [(3, (90.0, 40.0, 110.0, 60.0))]})
    result = evaluate_dataset(tmp_path, reader=reader)
    assert (result.images, result.matched, result.face_correct) == (2, 2, 1)

    split = tmp_path / "split"
    _photo(split, "images/train/x.png", "0 0.5 0.5 0.1 0.2\n")
    _photo(split, "images/val/y.png", "0 0.5 0.5 0.1 0.2\n")
    assert evaluate_dataset(split, reader=_Fixed({}), split="train").images == 1
    with pytest.raises(
        DatasetError, match=r"expected images/test/ .* got images/train/, images/val/"
    ):
        evaluate_dataset(split, reader=_Fixed({}), split="test")  # not train and val together
    (tmp_path / "bare" / "images" / "sub").mkdir(parents=True)
    with pytest.raises(DatasetError, match="no photos in .*images: the folder is no image in it"):
        evaluate_dataset(tmp_path / "bare", reader=_Fixed({}))


class _Unreadable(_Fixed):
    def read(self, image: object, *, expected_dice: int | None = None) -> Reading:
        if Path(str(image)).stem.startswith("bad"):
            raise ImageError(f"cannot read {image}")
        return super().read(image)


def test_the_dice_of_an_unreadable_photo_are_binned_by_their_size_or_by_none(tmp_path: Path):
    # their boxes stayed normalised (under 1 px): each 80 px die was counted in the 0-20 px bin
    _photo(tmp_path, "images/ok.png", "0 0.5 0.5 0.2 0.2\n", size=(400, 400))
    whole = _photo(tmp_path, "images/bad1.png", "0 0.5 0.5 0.2 0.2\n", size=(400, 400))
    whole.write_bytes(whole.read_bytes()[:60])  # the header only: the size is known
    _photo(tmp_path, "images/bad2.png", "0 0.5 0.5 0.2 0.2\n").write_bytes(b"not an image")
    reader = _Unreadable({"ok": [(1, (160.0, 160.0, 240.0, 240.0))]})
    result = evaluate_dataset(tmp_path, reader=reader)
    assert (result.images, result.truth_dice, len(result.errors)) == (3, 3, 2)
    assert result.by_size == [[0, 0], [0, 0], [0, 0], [0, 0], [1, 2]]
    assert result.unsized == 1 and result.to_dict()["dice_of_unknown_size"] == 1
    assert "80+ px 1/2  (1 of unreadable photos: size unknown)" in result.format()
