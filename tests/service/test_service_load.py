"""The service under load, over a real uvicorn server with real concurrent clients: many photos
read at once, players moving their turns meanwhile, racing banks, slow and vanished clients."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from vision import Reading, load_image

from dicecam_testing.turns import dice, jpeg


class GatedReader:
    """Decodes each photo for real, then holds it until ``gate`` opens; reports the dice whose
    values the photo's width encodes (``640 + 10 * n`` wide: ``[n % 6 + 1] * 6``)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def read(self, image: Any, expected_dice: int | None = None) -> Reading:
        img = load_image(image)
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if not self.gate.wait(30):
                raise TimeoutError("the test never opened the gate")
        finally:
            with self._lock:
                self.running -= 1
        return Reading(img.width, img.height, dice(values_of(img.width)), expected_dice=None)


def values_of(width: int) -> list[int]:
    return [(width - 640) // 10 % 6 + 1] * 6


def photo(n: int) -> bytes:
    return jpeg(640 + 10 * n, 480)


def wait_until(check: Callable[[], bool], seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.01)


@pytest.fixture
def gated(serve, tmp_path, monkeypatch) -> Iterator[tuple[httpx.Client, GatedReader, Any]]:
    """A served app whose reader waits for the test; ``DICECAM_READ_*`` set by the test first."""
    reader = GatedReader()

    def start(**env: str) -> tuple[httpx.Client, Any]:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = create_app(
            Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None
        )
        limits = httpx.Limits(max_connections=100)  # every request on a connection of its own
        return httpx.Client(base_url=serve(app).url, timeout=30, limits=limits), app

    yield reader, start
    reader.gate.set()


def post_photo(http: httpx.Client, n: int) -> httpx.Response:
    return http.post("/api/v1/read", files={"photo": (f"{n}.jpg", photo(n), "image/jpeg")})


# -- many photos at once ------------------------------------------------------------------------


def test_photos_waiting_for_the_reader_hold_no_thread_other_players_need(gated):
    """44 photos in flight (more than the server's 40 pooled threads): a player's typed roll,
    keep and bank still answer at once; then every photo gets its own dice."""
    reader, start = gated
    http, _ = start(DICECAM_READ_WORKERS="4", DICECAM_READ_QUEUE="100")
    n = 44
    with ThreadPoolExecutor(n) as pool:
        answers = [pool.submit(post_photo, http, i) for i in range(n)]
        wait_until(lambda: reader.running == 4)
        time.sleep(0.5)  # the other 40 arrive and wait
        began = time.monotonic()
        turn = http.post("/api/v1/turns", json={"player": "ann"}, timeout=5).json()
        t = http.post(
            f"/api/v1/turns/{turn['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]}, timeout=5
        )
        assert t.status_code == 200, t.text
        t = http.post(f"/api/v1/turns/{turn['id']}/keep", json={"dice": [1]}, timeout=5)
        assert t.status_code == 200, t.text
        t = http.post(f"/api/v1/turns/{turn['id']}/bank", timeout=5)
        assert t.status_code == 200 and t.json()["outcome"] == "banked", t.text
        moved_in = time.monotonic() - began
        reader.gate.set()
        got = [a.result() for a in answers]
    assert moved_in < 3, f"a turn's moves waited {moved_in:.1f} s behind the photos"
    assert [r.status_code for r in got] == [200] * n, [r.text for r in got if r.is_error]
    assert [r.json()["values"] for r in got] == [values_of(640 + 10 * i) for i in range(n)]
    assert reader.most == 4


def raw_request(port: int, head: str, body: bytes = b"", *, wait: float = 5) -> bytes:
    """Send ``head`` (and ``body``) on a socket of its own and return what comes back within
    ``wait`` seconds (the connection is left open: a client that stops sending)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        try:
            return s.recv(65536)
        except TimeoutError:
            return b""


def multipart_head(path: str, length: int, boundary: str = "b0undary") -> str:
    return (
        f"POST {path} HTTP/1.1\nHost: 127.0.0.1\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\n"
        f"Content-Length: {length}\n"
    )


def test_a_full_queue_answers_503_with_retry_after_before_the_upload(gated):
    reader, start = gated
    http, _ = start(DICECAM_READ_WORKERS="1", DICECAM_READ_QUEUE="1")
    port = http.base_url.port
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(post_photo, http, 1)
        wait_until(lambda: reader.running == 1)
        second = pool.submit(post_photo, http, 2)
        time.sleep(0.3)  # admitted, waiting for the one worker
        began = time.monotonic()
        # headers only, a 10 MB body announced and never sent: refused without waiting for it
        answer = raw_request(port, multipart_head("/api/v1/read", 10_000_000))
        refused_in = time.monotonic() - began
        full = post_photo(http, 3)
        reader.gate.set()
        done = [first.result(), second.result()]
    assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
    assert refused_in < 2
    assert full.status_code == 503 and int(full.headers["retry-after"]) >= 1
    assert "DICECAM_READ_QUEUE" in full.json()["detail"]
    assert [r.json()["values"] for r in done] == [values_of(650), values_of(660)]
    again = post_photo(http, 4)  # the places are given back
    assert again.status_code == 200 and again.json()["values"] == values_of(680)


# -- turns ------------------------------------------------------------------------------------


def test_a_turn_waiting_for_the_database_does_not_stop_the_server(gated, tmp_path):
    """Another process (a second ``dicecam serve`` on the data folder) writes the turns file:
    a turn started meanwhile waits for it, and the server answers everyone else meanwhile."""
    _, start = gated
    http, _ = start()
    other = sqlite3.connect(tmp_path / "turns.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the other process's write, in progress
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(http.post, "/api/v1/turns", json={"player": "bob"})
        time.sleep(0.3)
        began = time.monotonic()
        health = http.get("/api/v1/health", timeout=5)
        answered_in = time.monotonic() - began
        other.execute("COMMIT")
        made = waiting.result()
    other.close()
    assert health.status_code == 200 and answered_in < 1, f"{answered_in:.1f} s"
    assert made.status_code == 201, made.text
    assert http.get(f"/api/v1/turns/{made.json()['id']}").json()["player"] == "bob"
