"""POST /api/read and /api/v1/read over real HTTP: readings, bad input, a failing reader."""

from __future__ import annotations

import io
import re

import httpx
import pytest
from PIL import Image

from service.app import create_app
from service.settings import Settings
from vision import Die, Reading, load_image

from dicecam_testing.servers import LiveServer


class FixedDiceReader:
    """Decodes the photo for real (vision.load_image), then reports the dice it was given."""

    def __init__(self, dice: list[Die]) -> None:
        self.dice = dice
        self.calls = 0

    def read(self, image, expected_dice=None) -> Reading:
        self.calls += 1
        img = load_image(image)
        return Reading(img.width, img.height, list(self.dice), expected_dice=expected_dice)


class CrashingReader:
    def read(self, image, expected_dice=None) -> Reading:
        raise RuntimeError("onnx session exploded")


def jpeg(width: int = 320, height: int = 240, color=(20, 90, 40)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "JPEG")
    return buf.getvalue()


DICE = [
    Die(5, (10, 10, 40, 40), 0.97),
    Die(1, (60, 12, 90, 42), 0.95),
    Die(3, (120, 20, 150, 50), 0.9, on_table=False),
]


@pytest.fixture
def server(tmp_path):
    reader = FixedDiceReader(DICE)
    settings = Settings(data_dir=tmp_path, max_upload_mb=1.0)
    app = create_app(settings, reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as srv:
        srv.reader = reader
        yield srv


def test_read_returns_the_reading_json(server):
    photo = jpeg()
    for path in ("/api/read", "/api/v1/read"):
        r = httpx.post(
            server.url + path, files={"photo": ("roll.jpg", photo, "image/jpeg")}, timeout=30
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["width"] == 320 and body["height"] == 240
        assert body["values"] == [5, 1]
        assert body["off_table"] == 1 and body["bust"] is True
        assert [d["value"] for d in body["dice"]] == [5, 1, 3]
        assert body["dice"][2]["on_table"] is False
        assert body["image"] == "roll.jpg"
    assert server.reader.calls == 1  # the second read of the same photo is served from cache


def test_without_a_tracker_logging_in_says_so(server):
    login = {"name": "mike", "password": "correct horse"}
    r = httpx.post(server.url + "/api/v1/tracker/tokens", json=login, timeout=30)
    assert r.status_code == 404 and "no tracker" in r.json()["detail"]


def test_a_dice_count_is_part_of_the_cached_reading(server):
    photo = jpeg()
    files = {"photo": ("roll.jpg", photo, "image/jpeg")}
    assert (
        httpx.post(server.url + "/api/v1/read", files=files, timeout=30).json()["expected_dice"]
        is None
    )
    # the reader fits its dice to the count it is told (vision.count): a new count, a new read
    for _ in range(2):
        r = httpx.post(
            server.url + "/api/v1/read", files=files, data={"expected_dice": "4"}, timeout=30
        )
        assert r.status_code == 200, r.text
        assert r.json()["expected_dice"] == 4 and r.json()["missing"] == 1
    assert server.reader.calls == 2
    for bad, said in (
        ("0", "'expected_dice': expected a dice count of 1 or more, got 0"),
        ("six", "'expected_dice': expected a whole number in the digits 0-9, got 'six'"),
    ):
        r = httpx.post(
            server.url + "/api/v1/read", files=files, data={"expected_dice": bad}, timeout=30
        )
        assert r.status_code == 422 and said in r.json()["detail"]
    assert server.reader.calls == 2


def test_not_an_image_is_415_with_a_message(server):
    r = httpx.post(
        server.url + "/api/read",
        files={"photo": ("notes.txt", b"hello, not a photo", "text/plain")},
        timeout=30,
    )
    assert r.status_code == 415
    detail = r.json()["detail"]
    assert detail.startswith("dicecam cannot read this photo: not an image (expected JPEG")
    assert detail.endswith("GIF data)")  # the name of in-memory data is left out at the end
    assert "<bytes>" not in detail
    r = httpx.post(
        server.url + "/api/read",
        files={"photo": ("cut.jpg", jpeg()[:300], "image/jpeg")},
        timeout=30,
    )
    assert r.status_code == 415
    assert r.json()["detail"] == "dicecam cannot read this photo: Truncated File Read"


def test_missing_photo_field_is_422(server):
    r = httpx.post(
        server.url + "/api/read", files={"picture": ("x.jpg", jpeg(), "image/jpeg")}, timeout=30
    )
    assert r.status_code == 422
    assert "photo" in r.json()["detail"]
    r = httpx.post(server.url + "/api/read", json={"values": [1, 2]}, timeout=30)
    assert r.status_code == 415
    assert "multipart/form-data" in r.json()["detail"]
    r = httpx.post(
        server.url + "/api/read", files={"photo": ("empty.jpg", b"", "image/jpeg")}, timeout=30
    )
    assert r.status_code == 422
    assert "empty" in r.json()["detail"]


def test_too_large_upload_is_413_and_the_service_stays_up(server):
    big = b"\xff\xd8" + b"0" * 1_200_000  # over the 1 MB limit of this server
    r = httpx.post(
        server.url + "/api/read", files={"photo": ("big.jpg", big, "image/jpeg")}, timeout=30
    )
    assert r.status_code == 413
    assert "1 MB" in r.json()["detail"] and "DICECAM_MAX_UPLOAD_MB" in r.json()["detail"]

    def chunks():  # no Content-Length: the limit is enforced while streaming
        yield (
            b'--zzz\r\nContent-Disposition: form-data; name="photo"; filename="a.jpg"\r\n'
            b"Content-Type: image/jpeg\r\n\r\n"
        )
        for _ in range(30):
            yield b"x" * 65536
        yield b"\r\n--zzz--\r\n"

    r = httpx.post(
        server.url + "/api/read",
        content=chunks(),
        headers={"content-type": "multipart/form-data; boundary=zzz"},
        timeout=30,
    )
    assert r.status_code == 413
    assert server.reader.calls == 0
    ok = httpx.post(
        server.url + "/api/read", files={"photo": ("a.jpg", jpeg(), "image/jpeg")}, timeout=30
    )
    assert ok.status_code == 200


def test_a_crashing_reader_is_a_500_json_error_not_an_outage(tmp_path, caplog):
    app = create_app(
        Settings(data_dir=tmp_path), reader=CrashingReader(), tracker_app=None, submitter=None
    )
    with LiveServer(app) as srv, caplog.at_level("ERROR", logger="dicecam.service"):
        r = httpx.post(
            srv.url + "/api/read", files={"photo": ("a.jpg", jpeg(), "image/jpeg")}, timeout=30
        )
        assert r.status_code == 500
        error_id = r.json()["error_id"]  # the photo's failure is said, why only in the log
        assert r.json()["detail"].startswith(
            f"the dice reader failed on this photo: error {error_id}"
        )
        assert "exploded" not in r.text
        (logged,) = [m for m in caplog.messages if error_id in m]
        assert "RuntimeError: onnx session exploded" in logged
        assert httpx.get(srv.url + "/api/v1/health", timeout=30).json()["status"] == "ok"


def test_a_reader_that_cannot_load_is_503_and_typed_values_still_work(tmp_path, monkeypatch):
    from service.api import reader as reader_module

    def broken_factory():
        raise FileNotFoundError("models/dicecam-reader.onnx not found")

    monkeypatch.setattr(reader_module, "_default_factory", broken_factory)
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    with LiveServer(app) as srv:
        r = httpx.post(
            srv.url + "/api/read", files={"photo": ("a.jpg", jpeg(), "image/jpeg")}, timeout=30
        )
        assert r.status_code == 503
        assert "could not be loaded" in r.json()["detail"]
        health = httpx.get(srv.url + "/api/v1/health", timeout=30).json()
        assert health["reader"]["loaded"] is False and "onnx" in health["reader"]["error"]
        assert health["reader"]["model"] is None and health["reader"]["backend"] is None
        assert health["reader"]["stages"] is None


def test_openapi_documents_the_versioned_api(server):
    schema = httpx.get(server.url + "/openapi.json", timeout=30).json()
    paths = schema["paths"]
    for p in (
        "/api/read",
        "/api/v1/read",
        "/api/v1/score",
        "/api/v1/turns",
        "/api/v1/turns/{turn_id}/rolls",
        "/api/v1/turns/{turn_id}/keep",
        "/api/v1/turns/{turn_id}/bank",
    ):
        assert p in paths, p
    body = paths["/api/v1/turns/{turn_id}/rolls"]["post"]["requestBody"]["content"]
    assert {"multipart/form-data", "application/json"} <= set(body)


def test_the_page_and_its_assets_are_served_locally(server):
    html = httpx.get(server.url + "/", timeout=30)
    assert html.status_code == 200 and "<video" in html.text
    for asset in ("/static/app.js", "/static/style.css"):
        r = httpx.get(server.url + asset, timeout=30)
        assert r.status_code == 200 and len(r.text) > 100
    # app.js is a module: every module it imports, and theirs, is served as JavaScript
    pending, seen = ["app.js"], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        r = httpx.get(f"{server.url}/static/{name}", timeout=30)
        assert r.status_code == 200, name
        assert "javascript" in r.headers["content-type"], (name, r.headers["content-type"])
        pending += [m for m in re.findall(r'from "\./([\w-]+\.js)"', r.text) if m not in seen]
    assert {"app.js", "page.js", "camera.js", "reading.js", "turns.js"} <= seen
    # no CDN: everything the page loads comes from this server
    assert "http://" not in html.text and "https://" not in html.text


def test_the_same_photo_is_read_once(server):
    photo = jpeg(color=(200, 10, 10))
    for _ in range(3):
        r = httpx.post(
            server.url + "/api/read", files={"photo": ("a.jpg", photo, "image/jpeg")}, timeout=30
        )
        assert r.json()["values"] == [5, 1]
    assert server.reader.calls == 1
    r = httpx.post(
        server.url + "/api/read", files={"photo": ("b.jpg", jpeg(), "image/jpeg")}, timeout=30
    )
    assert r.status_code == 200 and server.reader.calls == 2
