"""How an import finds a photo and its size, edges mutation testing found untested: a Label
Studio task found by its ``data.name`` when its URL finds nothing, its size from a region's
``original_width``/``original_height``; a reference's path tried longest tail first, both of
Label Studio's prefixes stripped from a cached copy of an upload, the last ``?d=`` of a URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from vision.labelling import LabelledPhoto, read_labelstudio, write_labelstudio
from vision.labelling.locate import PhotoFinder, reference_parts
from vision.types import Die


def _image(path: Path, size: tuple[int, int] = (60, 40)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size).save(path)
    return path


def _task(tmp_path: Path, image: Path, name: str) -> dict:
    photo = LabelledPhoto(name, 200, 100, [Die(5, (20, 10, 60, 50), 0.9)], image)
    (task,) = json.loads(write_labelstudio([photo], tmp_path / "made").read_text())
    return task


def _save(tmp_path: Path, task: dict) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps([task]))
    return path


def test_a_label_studio_task_whose_url_finds_nothing_is_found_by_its_data_name(tmp_path):
    photos = tmp_path / "photos"
    image = _image(photos / "table" / "a.jpg", (200, 100))
    task = _task(tmp_path, image, "table/a.jpg")
    task["data"]["image"] = "http://elsewhere.example/media/b71c.jpg"  # served from elsewhere
    (photo,) = read_labelstudio(_save(tmp_path, task), image_root=photos)
    assert (photo.name, photo.image) == ("table/a.jpg", image)


def test_a_label_studio_photo_not_found_takes_its_size_from_its_regions(tmp_path):
    """Label Studio's export gives no photo size but each region's original_width/height."""
    task = _task(tmp_path, tmp_path / "gone.jpg", "gone.jpg")
    del task["data"]["width"], task["data"]["height"]
    (photo,) = read_labelstudio(_save(tmp_path, task))  # no image_root: a photo may be missing
    assert (photo.image, photo.width, photo.height) == (None, 200, 100)
    assert photo.dice[0].box == pytest.approx((20, 10, 60, 50))


def test_a_regions_original_size_wins_over_the_photo_found(tmp_path):
    """Percent boxes are of the photo Label Studio showed: a copy found at another size (a
    thumbnail) does not rescale them."""
    image = _image(tmp_path / "photos" / "a.jpg", (50, 25))
    task = _task(tmp_path, image, "a.jpg")
    del task["data"]["width"], task["data"]["height"]
    (photo,) = read_labelstudio(_save(tmp_path, task), image_root=tmp_path / "photos")
    assert (photo.image, photo.width, photo.height) == (image, 200, 100)
    assert photo.dice[0].box == pytest.approx((20, 10, 60, 50))


def test_the_longest_tail_of_a_reference_is_tried_first(tmp_path):
    """photos/dice.jpg names that photo, not another dice.jpg at the root."""
    deep = _image(tmp_path / "photos" / "dice.jpg")
    _image(tmp_path / "dice.jpg")
    finder = PhotoFinder([tmp_path])
    assert finder.find("/data/local-files/?d=photos/dice.jpg", "t") == deep
    assert finder.name("/data/local-files/?d=photos/dice.jpg", deep) == "photos/dice.jpg"


def test_a_cached_copy_of_an_upload_loses_both_of_label_studios_prefixes(tmp_path):
    """The COCO export's downloaded copy of an upload: md5[:8] + '__' before uuid[:8] + '-'."""
    photo = _image(tmp_path / "dice_12.jpg")
    finder = PhotoFinder([tmp_path])
    assert finder.find("images/5d41402a__3f2a9c1b-dice_12.jpg", "t") == photo


def test_the_last_d_of_a_local_files_url_wins():
    url = "http://localhost:8080/data/local-files/?d=old/a.jpg&d=new/b%20c.jpg"
    assert reference_parts(url) == ["new", "b c.jpg"]


def test_only_a_name_the_tool_renamed_is_looked_for_in_subfolders(tmp_path):
    """An upload's flat, prefixed name says nothing of folders: it is looked for anywhere under
    the root. A plain name keeps its folders: 'dice.jpg' is not some other folder's dice.jpg."""
    photo = _image(tmp_path / "table" / "dice.jpg")
    finder = PhotoFinder([tmp_path], subfolders=True)
    assert finder.find("dice.jpg", "t") is None
    assert "subfolders" not in finder.looked_for("dice.jpg")
    assert finder.find("/data/upload/1/3f2a9c1b-dice.jpg", "t") == photo
    assert finder.name("/data/upload/1/3f2a9c1b-dice.jpg", photo) == "table/dice.jpg"


def test_label_studio_storage_proxy_urls_give_their_filepath():
    url = "/storage-data/uploaded/?filepath=photos/dice%2012.jpg"
    assert reference_parts(url) == ["photos", "dice 12.jpg"]


def test_a_reference_up_and_out_of_the_export_is_found_under_the_root_never_above(tmp_path):
    """'..' is where the tool made its export, not a way out of the folder given."""
    root = tmp_path / "x" / "y"
    photo = _image(root / "photos" / "a.jpg")
    _image(tmp_path / "photos" / "a.jpg")  # what ../../photos/a.jpg is from the root
    assert reference_parts("../../photos/./a.jpg") == ["photos", "a.jpg"]
    assert PhotoFinder([root]).find("../../photos/./a.jpg", "t") == photo
