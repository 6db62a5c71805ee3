"""Each label writer that copies or links the photos names a photo whose file is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.labelling import LabelledPhoto
from vision.labelling.coco import write_coco
from vision.labelling.labelstudio import write_labelstudio
from vision.labelling.yolo import write_yolo
from vision.types import Die


@pytest.mark.parametrize("write", [write_yolo, write_coco, write_labelstudio])
@pytest.mark.parametrize("images", ["copy", "link"])
def test_a_photo_whose_file_is_gone_is_named(write, images: str, tmp_path: Path) -> None:
    gone = tmp_path / "photos" / "roll.jpg"
    photo = LabelledPhoto("table/roll.jpg", 640, 480, [Die(5, (10, 10, 40, 40), 0.9)], gone)
    with pytest.raises(FileNotFoundError) as missing:
        write([photo], tmp_path / "out", images=images)
    assert str(missing.value) == f"photo 'table/roll.jpg' not found at {gone}"
    unnamed = LabelledPhoto("roll.jpg", 640, 480, [], None)
    with pytest.raises(FileNotFoundError) as none:
        write([unnamed], tmp_path / "out2", images=images)
    # it said "not found at None": where to look, and how to do without, instead
    assert str(none.value) == (
        "photo 'roll.jpg': expected its image beside the labels or under --images-from, "
        "found none (or pass --images none to write the labels only)"
    )
