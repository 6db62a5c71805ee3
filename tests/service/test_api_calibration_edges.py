"""Calibration over real HTTP at its edges: ``width`` and ``height`` up to 100000 and ``image``
up to 300 characters (one past each refused, naming the field, the stored boundary kept); a
boundary replaced through the API applies to the very next read even on a file system whose
time stamps do not move between two writes of the same size; the proposal is the learned
outline of the photo in its pixels, x then y."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.api.reader import ReaderService
from service.app import create_app
from service.settings import Settings
from vision import Die, Reading, load_image

from dicecam_testing.servers import LiveServer

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "datasets" / "samples"
PHOTO = (SAMPLES / "roll-s21-009.jpg").read_bytes()  # 640 x 480
GOOD = {"points": [[10, 10], [600, 20], [620, 470], [5, 460]], "width": 640, "height": 480}


class OneDieReader:
    """Decodes the photo for real and reports one die in its middle; without a table step of
    its own, the service applies its calibration to the reading (``outline``)."""

    def read(self, image, expected_dice=None) -> Reading:
        img = load_image(image)
        die = Die(3, (300.0, 220.0, 340.0, 260.0), 0.99)
        return Reading(img.width, img.height, [die], expected_dice=expected_dice)


@pytest.fixture
def client(tmp_path):
    app = create_app(
        Settings(data_dir=tmp_path), reader=OneDieReader(), tracker_app=None, submitter=None
    )
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        yield c


def read_outline(client: httpx.Client) -> list[list[float]] | None:
    r = client.post("/api/v1/read", files={"photo": ("roll.jpg", PHOTO, "image/jpeg")})
    assert r.status_code == 200, r.text
    return r.json()["outline"]


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        ({"height": 100_000}, True),
        ({"height": 100_001}, False),
        ({"width": 100_000}, True),
        ({"width": 100_001}, False),
        ({"image": "p" * 300}, True),
        ({"image": "p" * 301}, False),
    ],
)
def test_sizes_and_the_photo_name_at_their_limits(client, change, taken):
    assert client.put("/api/v1/calibration", json=GOOD).status_code == 200
    stored = client.get("/api/v1/calibration").json()["calibration"]
    (field,) = change
    body = {**GOOD, **change}
    w, h = body["width"], body["height"]
    body["points"] = [[0, 0], [w, 0], [w, h], [0, h]]  # the whole photo, whatever its size
    r = client.put("/api/v1/calibration", json=body)
    if taken:
        assert r.status_code == 200, r.text
        if field == "image":
            assert r.json()["calibration"]["image"] == change["image"]
        return
    assert r.status_code == 422, r.text
    assert f"'{field}'" in r.json()["detail"], r.json()["detail"]
    assert client.get("/api/v1/calibration").json()["calibration"] == stored


def test_a_replaced_boundary_applies_at_once_where_time_stamps_do_not_move(client, monkeypatch):
    """On a file system with coarse time stamps that reuses the file's slot (FAT on an SD card),
    a second boundary of the same size leaves the file looking unchanged; the API tells the
    reader it changed, so the PUT's answer and the next read use the new one."""

    def coarse(self: ReaderService) -> tuple[int, int, int] | None:
        path = self.calibration_path
        return None if path is None or not path.is_file() else (0, path.stat().st_size, 0)

    monkeypatch.setattr(ReaderService, "_file_signature", coarse)
    first = [[100, 100], [500, 100], [500, 400], [100, 400]]
    second = [[110, 110], [510, 110], [510, 410], [110, 410]]  # same digits: same file size
    r = client.put("/api/v1/calibration", json={**GOOD, "points": first})
    assert r.status_code == 200, r.text
    assert read_outline(client) == first
    r = client.put("/api/v1/calibration", json={**GOOD, "points": second})
    assert r.status_code == 200, r.text
    assert r.json()["calibration"]["points"][0] == [
        pytest.approx(110 / 640, abs=1e-4),
        pytest.approx(110 / 480, abs=1e-4),
    ]
    assert read_outline(client) == second
    assert client.delete("/api/v1/calibration").json()["removed"] is True
    assert read_outline(client) is None


def test_the_proposal_is_the_learned_outline_x_then_y(client):
    """A photo whose learned outline is a polygon (not the whole frame): the proposal is that
    polygon in the photo's pixels, [x, y] each, with a note counting its corners."""
    from vision.table import learned_outline

    model = learned_outline()
    if model is None:
        pytest.skip("no shipped outline model (dicecam-surface.onnx)")
    photo = (SAMPLES / "roll-s21-031.jpg").read_bytes()
    img = load_image(photo)
    expected = model.outline(img.rgb, (img.width, img.height))
    assert expected, "the shipped outline model sees the whole frame in roll-s21-031.jpg"
    r = client.post(
        "/api/v1/calibration/proposal", files={"photo": ("roll.jpg", photo, "image/jpeg")}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["width"], body["height"]) == (640, 480)
    assert body["outline"] == [[round(x, 1), round(y, 1)] for x, y in expected]
    assert max(y for _, y in body["outline"]) <= 480 < max(x for x, _ in expected) + 1
    assert body["note"] == f"the learned outline ({len(expected)} corners): adjust it, then save"
