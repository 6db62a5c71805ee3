"""service.api.errors: the 415 for a photo the reader cannot decode, in the words of
vision.ImageError with in-memory data named "the photo"; and each route's schema documenting
the error statuses it answers, no others."""

from __future__ import annotations

import pytest

from service.api.errors import WHY, unreadable_photo
from service.app import create_app
from service.settings import Settings
from vision.io import ImageError, load_image


@pytest.mark.parametrize(
    ("said", "detail"),
    [
        (
            "truncated or corrupt image: <bytes> (broken data)",
            "truncated or corrupt image: the photo (broken data)",
        ),
        (
            "image too large: <bytes> is 9000x9000 = 81 megapixels (limit 50); downscale it",
            "image too large: the photo is 9000x9000 = 81 megapixels (limit 50); downscale it",
        ),
        ("not an image (expected JPEG data): <bytes>", "not an image (expected JPEG data)"),
        ("cannot read the photo: Truncated File Read", "Truncated File Read"),
    ],
)
def test_an_unreadable_photo_is_a_415_in_the_readers_words(said, detail):
    refused = unreadable_photo(ImageError(said))
    assert refused.status_code == 415
    assert refused.detail == f"dicecam cannot read this photo: {detail}"


def test_a_real_image_error_reads_with_the_photo_named():
    with pytest.raises(ImageError) as caught:
        load_image(b"hello, not a photo")
    detail = unreadable_photo(caught.value).detail
    assert detail.startswith("dicecam cannot read this photo: not an image (expected JPEG")
    assert "<bytes>" not in detail and detail.endswith("data)")


def test_each_route_documents_its_own_error_statuses(tmp_path):
    paths = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None).openapi()
    paths = paths["paths"]
    one_turn = paths["/api/v1/turns/{turn_id}"]["get"]["responses"]
    assert sorted(one_turn) == ["200", "404", "422", "500"]
    assert one_turn["404"]["description"] == WHY[404]
    read = paths["/api/v1/read"]["post"]["responses"]
    assert sorted(read) == ["200", "400", "408", "413", "415", "422", "500", "503"]
    assert read["415"]["description"] == WHY[415]
