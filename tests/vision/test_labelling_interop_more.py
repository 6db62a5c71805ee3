"""Label Studio's COCO export, and CVAT's reading of our data.yaml.

Label Studio's COCO export is written by label-studio-sdk's ``Converter.convert_to_coco``
(2.1.2): ids from 0, ``file_name`` the task's URL when the photo could not be fetched, else a
path relative to the export (``os.path.relpath``): the upload in Label Studio's media folder, or
its download cache ``images/<md5[:8]>__<name>``. Uploads are named
``upload/<project>/<uuid4()[:8]>-<name>`` (Label Studio's ``upload_name_generator``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from PIL import Image

from service.cli import main
from vision.labelling import (
    LabelFormatError,
    LabelledPhoto,
    read_labels,
    read_labelstudio,
    read_yolo,
    write_training_folder,
    write_yolo,
)
from vision.types import Die

# photo -> (size, [(value, x, y, w, h) in pixels])
PHOTOS = {
    "dice_12.jpg": ((640, 480), [(3, 10.5, 20.0, 50.0, 48.0), (6, 300.0, 200.0, 44.5, 50.0)]),
    "photos/dice_13.jpg": ((320, 240), [(1, 1.0, 2.0, 30.0, 31.0)]),
    "table/roll 7.png": ((333, 257), [(5, 100.0, 50.0, 40.0, 40.0)]),
    "dice_14.jpg": ((200, 150), [(2, 5.0, 5.0, 20.0, 20.0)]),
}
# what Label Studio's COCO export writes for each
FILE_NAMES = {
    "dice_12.jpg": "/data/upload/1/3f2a9c1b-dice_12.jpg",  # an upload it could not fetch
    "photos/dice_13.jpg": "http://localhost:8080/data/local-files/?d=photos/dice_13.jpg",
    "table/roll 7.png": "../../label-studio/media/upload/1/0a1b2c3d-roll 7.png",  # flat upload
    "dice_14.jpg": "images/5d41402a__dice_14.jpg",  # its download cache
}


@pytest.fixture
def photo_dir(tmp_path: Path) -> Path:
    root = tmp_path / "my photos"
    for name, ((w, h), _) in PHOTOS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (w, h), (20, 90, 30)).save(root / name)
    return root


def labelstudio_coco(file_names: dict[str, str]) -> dict:
    """A COCO export as label-studio-sdk's convert_to_coco writes it."""
    names = ["1", "2", "3", "4", "5", "6", "cocked"]
    images, annotations = [], []
    for image_id, (name, ((w, h), dice)) in enumerate(PHOTOS.items()):
        images.append({"width": w, "height": h, "id": image_id, "file_name": file_names[name]})
        for value, x, y, bw, bh in dice:
            annotations.append(
                {
                    "id": len(annotations),
                    "image_id": image_id,
                    "category_id": names.index(str(value)),
                    "segmentation": [],
                    "bbox": [x, y, bw, bh],
                    "ignore": 0,
                    "iscrowd": 0,
                    "area": bw * bh,
                }
            )
    return {
        "images": images,
        "categories": [{"id": i, "name": n} for i, n in enumerate(names)],
        "annotations": annotations,
        "info": {"year": 2026, "version": "1.0", "contributor": "Label Studio"},
    }


def write_export(tmp_path: Path, file_names: dict[str, str] = FILE_NAMES) -> Path:
    export = tmp_path / "project-1-at-2026-11-30-10-00-1a2b3c4d" / "result.json"
    export.parent.mkdir()
    export.write_text(json.dumps(labelstudio_coco(file_names)))
    return export


def test_labelstudio_coco_export_imports_with_every_box_and_value(photo_dir, tmp_path, capsys):
    export = write_export(tmp_path)
    train = tmp_path / "train"
    argv = ["labels", "import", str(export), "--images-from", str(photo_dir), "--out", str(train)]

    assert main(argv) == 0, capsys.readouterr().err

    back = {p.name: p for p in read_yolo(train)}
    assert sorted(back) == [
        "dice_12.jpg",
        "dice_14.jpg",
        "photos__dice_13.jpg",
        "table__roll 7.png",
    ]
    for name, (_, dice) in PHOTOS.items():
        photo = back[name.replace("/", "__")]
        assert os.path.samefile(photo.image, photo_dir / name)  # linked: the user's own photo
        assert [d.value for d in photo.dice] == [v for v, *_ in dice]
        for die, (_, x, y, w, h) in zip(photo.dice, dice, strict=True):
            assert die.box == pytest.approx((x, y, x + w, y + h), abs=1e-3)


def test_labelstudio_coco_photo_not_found_names_file_name_and_what_was_looked_for(
    photo_dir, tmp_path, capsys
):
    (photo_dir / "table/roll 7.png").unlink()
    export = write_export(tmp_path)
    argv = ["labels", "import", str(export), "--images-from", str(photo_dir)]
    argv += ["--out", str(tmp_path / "t")]

    assert main(argv) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "1 labelled photo(s) not found: image 3 file_name" in err
    assert repr(FILE_NAMES["table/roll 7.png"]) in err
    assert "'0a1b2c3d-roll 7.png', 'roll 7.png'" in err and "and its subfolders" in err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    ("taken", "reference"),
    [
        ("3f2a9c1b-dice_12.jpg", "/data/upload/1/3f2a9c1b-dice_12.jpg"),  # hash prefix or not
        ("other/roll 7.png", "../../label-studio/media/upload/1/0a1b2c3d-roll 7.png"),  # folders
    ],
)
def test_two_photos_that_fit_a_file_name_are_both_named_never_guessed(
    photo_dir, tmp_path, taken, reference
):
    original = next(n for n, f in FILE_NAMES.items() if f == reference)
    (photo_dir / taken).parent.mkdir(exist_ok=True)
    (photo_dir / taken).write_bytes((photo_dir / original).read_bytes())
    export = write_export(tmp_path)

    with pytest.raises(LabelFormatError, match="expected one photo for") as caught:
        read_labels(export, image_root=photo_dir)

    assert reference in str(caught.value)
    assert str(photo_dir / taken) in str(caught.value)
    assert str(photo_dir / original) in str(caught.value)


def test_hash_prefix_is_kept_when_the_photo_has_it(photo_dir, tmp_path):
    # a photo of the user's own named like an upload is found as named, not stripped
    (photo_dir / "dice_12.jpg").rename(photo_dir / "3f2a9c1b-dice_12.jpg")
    photos = read_labels(write_export(tmp_path), image_root=photo_dir)
    assert photos[0].image == photo_dir / "3f2a9c1b-dice_12.jpg"
    assert photos[0].name == "3f2a9c1b-dice_12.jpg"


def test_labelstudio_json_upload_with_and_without_hash_is_not_guessed(photo_dir, tmp_path):
    (photo_dir / "1a2b3c4d-dice_14.jpg").write_bytes((photo_dir / "dice_14.jpg").read_bytes())
    task = {"id": 5, "data": {"image": "/data/upload/3/1a2b3c4d-dice_14.jpg"}, "annotations": []}
    (tmp_path / "export.json").write_text(json.dumps([task]))

    with pytest.raises(LabelFormatError, match=r"task 5: expected one photo for .* got 2"):
        read_labelstudio(tmp_path / "export.json", image_root=photo_dir)


def test_a_file_name_too_long_for_the_system_is_a_photo_not_found(photo_dir, tmp_path):
    names = {**FILE_NAMES, "dice_14.jpg": "x" * 5000 + ".jpg"}  # os.stat: ENAMETOOLONG
    with pytest.raises(LabelFormatError, match=r"1 labelled photo\(s\) not found: image 4"):
        read_labels(write_export(tmp_path, names), image_root=photo_dir)


# ------------------------------------------------------------------------------- YOLO data.yaml

# CVAT's datumaro fork (datumaro/plugins/yolo_format/extractor.py, YOLOv8DetectionExtractor, as
# CVAT's "Ultralytics YOLO Detection 1.0" import uses it) reads every data.yaml key but these as
# a subset: a folder is walked, a .txt lists photos, a list names them. CVAT's
# import_dm_annotations then adds each subset's boxes to the frame of the same name.
CVAT_RESERVED = {"backup", "classes", "names", "path", "kpt_shape", "flip_idx"}


def cvat_subset_photos(data_yaml: Path) -> list[tuple[str, str]]:
    """(subset, photo id) of each item CVAT's fork reads from ``data_yaml``."""
    root = data_yaml.parent
    items = []
    for subset, source in yaml.safe_load(data_yaml.read_text()).items():
        if subset in CVAT_RESERVED:
            continue
        if isinstance(source, list):
            paths = source
        elif source.endswith(".txt"):
            paths = (root / source).read_text().split()
        else:
            paths = [str(p.relative_to(root)) for p in (root / source).rglob("*") if p.is_file()]
        items += [(subset, Path(*Path(p).parts[2:]).stem) for p in paths]
    return items


@pytest.fixture
def labelled(photo_dir) -> list[LabelledPhoto]:
    made = []
    for name, ((w, h), dice) in PHOTOS.items():
        boxes = [Die(v, (x, y, x + bw, y + bh), 0.9) for v, x, y, bw, bh in dice]
        made.append(LabelledPhoto(name, w, h, boxes, photo_dir / name))
    return made


def test_cvat_reads_each_labelled_photo_of_data_yaml_once(labelled, tmp_path):
    data_yaml = write_yolo(labelled, tmp_path / "yolo")

    items = cvat_subset_photos(data_yaml)

    ids = [photo for _, photo in items]
    assert sorted(ids) == sorted(Path(p.flat_name).stem for p in labelled)  # each once
    data = yaml.safe_load(data_yaml.read_text())
    assert data["train"] == "images/train" and "val" in data  # ultralytics requires both keys
    assert {p.name: len(p.dice) for p in read_yolo(tmp_path / "yolo")} == {
        p.flat_name: len(p.dice) for p in labelled
    }


def test_training_folder_still_validates_on_its_photos(labelled, tmp_path):
    # dicecam labels import: dicecam eval and ultralytics read its `val:` (no CVAT upload)
    data_yaml = write_training_folder(labelled, tmp_path / "train")
    assert yaml.safe_load(data_yaml.read_text())["val"] == "images/train"


def test_datumaro_imports_each_photo_once(labelled, tmp_path):
    dm = pytest.importorskip("datumaro")
    data_yaml = write_yolo(labelled, tmp_path / "yolo")

    dataset = dm.Dataset.import_from(str(data_yaml.parent), "yolo")

    items = sorted((item.id, len(item.annotations)) for item in dataset)
    assert items == sorted((Path(p.flat_name).stem, len(p.dice)) for p in labelled)
