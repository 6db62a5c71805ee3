"""A Morning Roll turn played through the service is submitted to the embedded tracker, with each
roll's reading and photo as evidence; the tracker's refusals reach the player, nothing is lost."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import httpx
import pytest
from PIL import Image

from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice

pytest.importorskip("service.tracker")


_shots = iter(range(1, 10_000))


def png() -> bytes:
    """A distinct photo each call (the service caches readings by photo bytes)."""
    n = next(_shots)
    buf = io.BytesIO()
    Image.new("RGB", (320, 240), (30, 100, n % 256)).save(buf, "PNG")
    return buf.getvalue()


def open_timezone() -> str:
    """A fixed-offset zone where it is now between 10:00 and 18:00 (the tracker is open 8-20)."""
    hour = datetime.now(UTC).hour
    for offset in range(-12, 15):
        if 10 <= (hour + offset) % 24 <= 18:
            return f"Etc/GMT{-offset:+d}" if offset else "UTC"
    raise AssertionError("unreachable")


@pytest.fixture
def server(tmp_path):
    reader = QueueReader()
    app = create_app(Settings(data_dir=tmp_path), reader=reader)
    with LiveServer(app) as srv:
        srv.reader = reader
        srv.client = httpx.Client(base_url=srv.url, timeout=60)
        yield srv
        srv.client.close()


def login(client: httpx.Client, name: str, prefix: str = "/tracker") -> str:
    """Register ``name`` on the tracker at ``prefix`` and return a token of theirs."""
    r = client.post(
        f"{prefix}/api/v1/players",
        json={"name": name, "password": "correct horse", "timezone": open_timezone()},
    )
    assert r.status_code == 201, r.text
    r = client.post(f"{prefix}/api/v1/tokens", json={"name": name, "password": "correct horse"})
    return r.json()["token"]


def test_a_banked_turn_reaches_the_tracker_with_its_evidence(server):
    c = server.client
    token = login(c, "heather")
    t = c.post(
        "/api/v1/turns", json={"player": "heather", "game": "morning-roll", "tracker_token": token}
    ).json()
    server.reader.rolls.append(dice([1, 2, 2, 3, 5, 6]))
    t = c.post(
        f"/api/v1/turns/{t['id']}/rolls", files={"photo": ("r.png", png(), "image/png")}
    ).json()
    t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1]}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 4, 4, 4, 6]}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1, 4, 4, 4]}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/bank").json()
    assert t["submission"]["status"] == "submitted", t["submission"]
    history = c.get("/tracker/api/v1/players/heather/turns").json()["turns"]
    assert [h["score"] for h in history] == [600]
    rolls = history[0]["rolls"]
    assert [r["values"] for r in rolls] == [[1, 2, 2, 3, 5, 6], [1, 4, 4, 4, 6]]
    assert rolls[0]["reading"]["values"] == [1, 2, 2, 3, 5, 6] and rolls[1]["reading"] is None
    photo = c.get(rolls[0]["photo_url"])
    assert photo.status_code == 200 and photo.content[:3] == b"\xff\xd8\xff"
    assert rolls[1]["photo_url"] is None

    # a second turn the same day busts (die off the table); the tracker refuses it, and says why
    t = c.post(
        "/api/v1/turns", json={"player": "heather", "game": "morning-roll", "tracker_token": token}
    ).json()
    server.reader.rolls.append(dice([1, 1, 5, 5, 3], off=1))
    t = c.post(
        f"/api/v1/turns/{t['id']}/rolls", files={"photo": ("r.png", png(), "image/png")}
    ).json()
    assert t["bust"] and t["submission"]["status"] == "rejected"
    assert "day" in t["submission"]["detail"].lower()
    assert c.get(f"/api/v1/turns/{t['id']}").json()["bust"] is True


def test_the_embedded_tracker_is_reached_on_the_address_the_server_listens_on(tmp_path):
    """Served on one address only (a LAN address, for phones), turns reach the embedded
    tracker there; they went to 127.0.0.1, where nothing listened, and stayed queued."""
    app = create_app(Settings(data_dir=tmp_path), reader=QueueReader())
    with LiveServer(app, host="127.0.0.2") as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        token = login(c, "nina")
        t = c.post("/api/v1/turns", json={"player": "nina", "tracker_token": token}).json()
        t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [2, 2, 3, 4, 6, 6]}).json()
        assert t["submission"]["status"] == "submitted", t["submission"]


def test_without_a_token_the_turn_is_kept_and_not_submitted(server):
    c = server.client
    r = c.post("/api/v1/tracker/tokens", json={"name": "mike", "password": "correct horse"})
    assert r.status_code == 401  # no such player on the embedded tracker
    t = c.post("/api/v1/turns", json={"player": "mike"}).json()
    t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [2, 2, 3, 4, 6, 6]}).json()
    assert t["bust"] and t["submission"]["status"] == "not-submitted"
    assert "log in" in t["submission"]["detail"]


def test_turns_go_to_a_remote_tracker_when_one_is_configured(tmp_path):
    from service.tracker import create_app as create_tracker_app

    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'remote.sqlite3'}")
    with LiveServer(tracker) as remote, httpx.Client(base_url=remote.url, timeout=30) as rc:
        rc.post(
            "/api/v1/players",
            json={"name": "jacob", "password": "correct horse", "timezone": open_timezone()},
        )
        settings = Settings(data_dir=tmp_path / "svc", tracker_url=remote.url)
        app = create_app(settings, reader=QueueReader())
        with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
            assert c.get("/api/v1/health").json()["tracker"] == remote.url
            assert c.get("/tracker/api/v1/rounds").status_code == 404  # nothing embedded
            # the page logs in through the service, which asks the remote tracker
            login = {"name": "jacob", "password": "wrong password"}
            r = c.post("/api/v1/tracker/tokens", json=login)
            assert r.status_code == 401, r.text
            login["password"] = "correct horse"
            r = c.post("/api/v1/tracker/tokens", json=login)
            assert r.status_code == 201 and r.json()["player"]["name"] == "jacob", r.text
            token = r.json()["token"]
            t = c.post("/api/v1/turns", json={"player": "jacob", "tracker_token": token}).json()
            t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [5, 2, 2, 3, 4, 6]}).json()
            t = c.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [5]}).json()
            t = c.post(f"/api/v1/turns/{t['id']}/bank").json()
            assert t["submission"]["status"] == "submitted", t["submission"]
        history = rc.get("/api/v1/players/jacob/turns").json()["turns"]
        assert [h["score"] for h in history] == [50]


def test_an_unreachable_tracker_queues_the_turn_in_the_outbox(tmp_path, unused_port):
    from service.tracker_client import Outbox

    dead = f"http://127.0.0.1:{unused_port}"  # held for the test: nothing listens on it
    settings = Settings(data_dir=tmp_path, tracker_url=dead)
    with LiveServer(create_app(settings, reader=QueueReader())) as srv:
        c = httpx.Client(base_url=srv.url, timeout=60)
        t = c.post("/api/v1/turns", json={"player": "shea", "tracker_token": "tok"}).json()
        t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [2, 2, 3, 4, 6, 6]}).json()
        c.close()
    assert t["bust"] and t["submission"]["status"] == "queued"
    assert "cannot reach the tracker" in t["submission"]["detail"]
    pending = list(Outbox(tmp_path / "outbox").entries("pending"))
    assert [(e.turn["player"], e.turn["score"]) for e in pending] == [("shea", 0)]


def test_a_queued_turn_is_sent_once_the_tracker_is_back(tmp_path, unused_port):
    """The service tries its queued turns again on its own (``DICECAM_OUTBOX_RETRY_S``), and
    the turn's receipt says when the tracker took it."""
    import time

    from service.tracker import create_app as create_tracker_app

    port = unused_port  # held for the test: the tracker comes back on it, nobody else
    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'remote.sqlite3'}")
    with (
        LiveServer(tracker, port=port) as remote,
        httpx.Client(base_url=remote.url, timeout=30) as rc,
    ):
        token = login(rc, "lena", prefix="")
    settings = Settings(
        data_dir=tmp_path / "svc", tracker_url=f"http://127.0.0.1:{port}", outbox_retry_s=0.2
    )
    with LiveServer(create_app(settings, reader=QueueReader())) as srv:
        c = httpx.Client(base_url=srv.url, timeout=60)
        t = c.post("/api/v1/turns", json={"player": "lena", "tracker_token": token}).json()
        t = c.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [2, 2, 3, 4, 6, 6]}).json()
        assert t["submission"]["status"] == "queued", t["submission"]
        assert "the service tries again on its own every 0.2 s" in t["submission"]["detail"]
        with LiveServer(tracker, port=port) as remote:
            deadline = time.monotonic() + 30
            while (got := c.get(f"/api/v1/turns/{t['id']}").json())["submission"][
                "status"
            ] == "queued" and time.monotonic() < deadline:
                time.sleep(0.1)
            assert got["submission"]["status"] == "submitted", got["submission"]
            history = httpx.get(f"{remote.url}/api/v1/players/lena/turns", timeout=30).json()[
                "turns"
            ]
        assert [(h["score"], h["id"]) for h in history] == [(0, got["submission"]["turn"]["id"])]
        c.close()


def test_evidence_photos_are_jpeg_and_small_enough_for_the_tracker():
    import numpy as np

    from service.api.submit import as_jpeg

    noise = np.random.default_rng(0).integers(0, 255, (2400, 3200, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(noise).save(buf, "JPEG", quality=95)
    big = buf.getvalue()
    assert len(big) > 1_500_000
    small = as_jpeg(big)
    assert small[:3] == b"\xff\xd8\xff" and len(small) < len(big)
    assert max(Image.open(io.BytesIO(small)).size) == 2048
    assert as_jpeg(png())[:3] == b"\xff\xd8\xff"
    assert as_jpeg(b"not a photo") is None and as_jpeg(None) is None


def test_the_page_logs_in_with_any_password_the_tracker_registers(server):
    c = server.client
    longest = "p" * 256  # the tracker's own limit, which the service's login route shares
    r = c.post(
        "/tracker/api/v1/players",
        json={"name": "heather", "password": longest, "timezone": open_timezone()},
    )
    assert r.status_code == 201, r.text
    r = c.post("/api/v1/tracker/tokens", json={"name": "heather", "password": longest})
    assert r.status_code == 201, r.text
    r = c.post("/api/v1/tracker/tokens", json={"name": "heather", "password": longest + "p"})
    assert r.status_code == 422 and "256" in r.json()["detail"]


@pytest.mark.parametrize(
    ("retry_s", "said"),
    [
        (30.0, "the service tries again on its own every 30 s, `dicecam outbox deliver`"),
        (0.0, "the service does not try again on its own (DICECAM_OUTBOX_RETRY_S=0), `dicecam"),
    ],
)
def test_a_queued_receipt_says_whether_the_service_tries_again(tmp_path, retry_s, said):
    # with DICECAM_OUTBOX_RETRY_S=0 nothing tries again: the receipt promised it did
    from service.api.submit import TrackerSubmitter
    from service.tracker_client import TrackerUnavailable

    def down():
        raise TrackerUnavailable("cannot reach the tracker at http://127.0.0.1:9")

    receipt = TrackerSubmitter(tmp_path / "outbox", retry_s=retry_s)._receipt(down)
    assert receipt["status"] == "queued" and said in receipt["detail"], receipt
