"""The service under load, over a real uvicorn server with real concurrent clients: many photos
read at once, players moving their turns meanwhile, racing banks, slow and vanished clients."""

from __future__ import annotations

import re
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
from dicecam_testing.waiting import wait_for


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
    http, app = start(DICECAM_READ_WORKERS="4", DICECAM_READ_QUEUE="100")
    queue = app.state.reader.queue
    n = 44
    with ThreadPoolExecutor(n) as pool:
        answers = [pool.submit(post_photo, http, i) for i in range(n)]
        wait_for(lambda: reader.running == 4 and queue.in_flight == n)  # the other 40 wait
        turn = http.post("/api/v1/turns", json={"player": "ann"}).json()
        t = http.post(f"/api/v1/turns/{turn['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]})
        assert t.status_code == 200, t.text
        t = http.post(f"/api/v1/turns/{turn['id']}/keep", json={"dice": [1]})
        assert t.status_code == 200, t.text
        t = http.post(f"/api/v1/turns/{turn['id']}/bank")
        assert t.status_code == 200 and t.json()["outcome"] == "banked", t.text
        # answered while every photo still waits (the gate shut): not behind them; a move
        # that waited for a photo's thread would have waited for good (the gate opens below).
        # Not timed: CI's two busy cores took seconds for moves that waited on nothing
        waited = [a for a in answers if a.done()]
        assert reader.running == 4 and queue.in_flight == n and not waited, waited
        reader.gate.set()
        got = [a.result() for a in answers]
    assert [r.status_code for r in got] == [200] * n, [r.text for r in got if r.is_error]
    assert [r.json()["values"] for r in got] == [values_of(640 + 10 * i) for i in range(n)]
    assert reader.most == 4


def raw_request(port: int, head: str, body: bytes = b"", *, wait: float = 5) -> bytes:
    """Send ``head`` (and ``body``) on a socket of its own and return the answer that comes
    back within ``wait`` seconds, whole as its Content-Length says (its head and body may come
    in two pieces), or what came (the connection is left open: a client that stops sending)."""
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        try:
            while not _whole_answer(got) and (piece := s.recv(65536)):
                got += piece
        except TimeoutError:
            pass
    return got


def _whole_answer(got: bytes) -> bool:
    """Whether ``got`` holds an HTTP answer's head and as much body as its Content-Length."""
    head, sep, rest = got.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return length is None or len(rest) >= int(length.group(1))


def multipart_head(path: str, length: int, boundary: str = "b0undary") -> str:
    return (
        f"POST {path} HTTP/1.1\nHost: 127.0.0.1\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\n"
        f"Content-Length: {length}\n"
    )


def test_a_full_queue_answers_503_with_retry_after_before_the_upload(gated):
    reader, start = gated
    http, app = start(DICECAM_READ_WORKERS="1", DICECAM_READ_QUEUE="1")
    queue = app.state.reader.queue
    port = http.base_url.port
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(post_photo, http, 1)
        wait_for(lambda: reader.running == 1)
        second = pool.submit(post_photo, http, 2)
        wait_for(lambda: queue.in_flight == 2)  # admitted, waiting for the one worker
        # headers only, a 10 MB body announced and never sent: refused without waiting for it
        # (an upload admitted would wait for the body, and be answered 408 after 30 s)
        answer = raw_request(port, multipart_head("/api/v1/read", 10_000_000), wait=15)
        full = post_photo(http, 3)
        reader.gate.set()
        done = [first.result(), second.result()]
    assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
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
        time.sleep(0.3)  # the turn on its way to the database's lock
        health = http.get("/api/v1/health")
        # answered while the turn still waits for the lock (a server stopped by it answers
        # nothing until the turn is made or refused); not timed: CI's busy cores are slow
        turn_waited = not waiting.done()
        other.execute("COMMIT")
        made = waiting.result()
    other.close()
    assert health.status_code == 200 and turn_waited, health.text
    assert made.status_code == 201, made.text
    assert http.get(f"/api/v1/turns/{made.json()['id']}").json()["player"] == "bob"


def race(n: int, call: Callable[[int], httpx.Response]) -> list[httpx.Response]:
    """``call(i)`` for i < n on n threads started together."""
    barrier = threading.Barrier(n)

    def go(i: int) -> httpx.Response:
        barrier.wait()
        return call(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(go, range(n)))


def play_at_once(http: httpx.Client, players: list[str]) -> None:
    """Every player starts, rolls, keeps and banks a turn at the same time as the others; each
    bank is sent twice at once (a double tap, two phones): one banks, the other is told 409."""
    n = len(players)
    turns = race(n, lambda i: http.post("/api/v1/turns", json={"player": players[i]}))
    assert [r.status_code for r in turns] == [201] * n, [r.text for r in turns]
    ids = [r.json()["id"] for r in turns]
    typed = {"values": [1, 5, 2, 3, 4, 6]}
    rolls = race(n, lambda i: http.post(f"/api/v1/turns/{ids[i]}/rolls", json=typed))
    assert [r.status_code for r in rolls] == [200] * n, [r.text for r in rolls]
    keeps = race(n, lambda i: http.post(f"/api/v1/turns/{ids[i]}/keep", json={"dice": [1, 5]}))
    assert [r.json()["turn_points"] for r in keeps] == [150] * n, [r.text for r in keeps]
    banks = race(2 * n, lambda i: http.post(f"/api/v1/turns/{ids[i // 2]}/bank"))
    for first, second in zip(banks[::2], banks[1::2], strict=True):
        assert sorted([first.status_code, second.status_code]) == [200, 409]
        refused = first if first.status_code == 409 else second
        assert "over (banked)" in refused.json()["detail"]


def test_players_moving_at_once_lose_nothing_and_a_turn_banks_once(gated, tmp_path):
    _, start = gated
    http, _ = start()
    for _ in range(3):  # the race, a bounded number of times
        play_at_once(http, [f"p{i}" for i in range(8)])
    # what the turns file holds: each turn banked once, with its keep
    from service.turn_db import TurnDatabase

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "turn-photos")
    rows = db.load(lambda row, photos: row, since=0)
    db.dispose()
    assert len(rows) == 24
    assert {tuple(m["op"] for m in row.moves) for row in rows} == {("roll", "keep", "bank")}
    assert {row.outcome for row in rows} == {"banked"}


def test_two_servers_on_one_data_folder_do_not_undo_each_others_moves(serve, tmp_path):
    """Two ``dicecam serve`` on one data folder by mistake: a turn both hold is moved on one;
    a move on the other's stale copy is refused (409) instead of writing over the first's, and
    a stale bank is not submitted."""
    submitted: list[tuple[str, int]] = []

    def submit(session: Any) -> dict[str, Any]:
        submitted.append((session.id, session.points))
        return {"status": "submitted"}

    def server() -> httpx.Client:
        app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=submit)
        return httpx.Client(base_url=serve(app).url, timeout=30)

    one = server()
    t = one.post("/api/v1/turns", json={"player": "cy"}).json()
    u = one.post("/api/v1/turns", json={"player": "di"}).json()
    one.post(f"/api/v1/turns/{t['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]})
    one.post(f"/api/v1/turns/{u['id']}/rolls", json={"values": [1, 2, 2, 3, 4, 6]})
    one.post(f"/api/v1/turns/{u['id']}/keep", json={"dice": [1]})
    two = server()  # started now: it loads both turns
    assert one.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1]}).status_code == 200
    assert one.post(f"/api/v1/turns/{t['id']}/bank").json()["outcome"] == "banked"
    stale = two.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1]})
    assert stale.status_code == 409, stale.text
    assert "another dicecam" in stale.json()["detail"]
    # the second server took up the turn as the file holds it
    assert two.get(f"/api/v1/turns/{t['id']}").json()["outcome"] == "banked"
    # u rolled on, on the first: the second's bank of its 100 points is refused, not sent
    one.post(f"/api/v1/turns/{u['id']}/rolls", json={"values": [5, 2, 2, 3, 4]})
    assert two.post(f"/api/v1/turns/{u['id']}/bank").status_code == 409
    assert submitted == [(t["id"], 100)]
    third = server()  # a server started afresh reads both as the first left them
    assert third.get(f"/api/v1/turns/{t['id']}").json()["turn_points"] == 100
    assert third.get(f"/api/v1/turns/{u['id']}").json()["awaiting"] == "keep"


# -- slow and vanished clients ----------------------------------------------------------------


def test_an_upload_that_stalls_gives_its_place_up(gated):
    """A phone that sends the headers and part of a photo, then nothing: 408 after
    DICECAM_UPLOAD_IDLE_S, and the reader's one place goes to the next photo."""
    reader, start = gated
    http, _ = start(DICECAM_READ_WORKERS="1", DICECAM_READ_QUEUE="0", DICECAM_UPLOAD_IDLE_S="0.5")
    reader.gate.set()
    head = multipart_head("/api/v1/read", 100_000)
    part = b"--b0undary\r\nContent-Disposition: form-da"
    answer = raw_request(http.base_url.port, head, part, wait=15)  # the default waits 30 s
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"nothing came for 0.5 s (DICECAM_UPLOAD_IDLE_S)" in answer, answer
    after = post_photo(http, 5)
    assert after.status_code == 200 and after.json()["values"] == values_of(690)


def test_a_phone_that_leaves_during_the_read_leaves_the_roll_whole(gated, tmp_path):
    """The phone gives up while its photo is read: the roll is made whole (in the server and
    in the turns file) or not at all, and the turn goes on from there."""
    reader, start = gated
    http, _ = start()
    t = http.post("/api/v1/turns", json={"player": "eve"}).json()
    files = {"photo": ("roll.jpg", photo(0), "image/jpeg")}  # read as six 1s
    with pytest.raises(httpx.ReadTimeout):
        http.post(f"/api/v1/turns/{t['id']}/rolls", files=files, timeout=0.5)
    reader.gate.set()
    wait_for(lambda: http.get(f"/api/v1/turns/{t['id']}").json()["rolls"] == 1)
    now = http.get(f"/api/v1/turns/{t['id']}").json()
    assert now["awaiting"] == "keep" and now["last_roll"]["values"] == [1] * 6
    from service.turn_db import TurnDatabase

    db = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "turn-photos")

    def saved():  # the roll is made in memory, then written: the file may lag a moment
        (row,) = [r for r in db.load(lambda row, photos: row, since=0) if r.id == t["id"]]
        return row if row.moves else None

    wait_for(saved)
    row = saved()
    db.dispose()
    assert [m["op"] for m in row.moves] == ["roll"] and row.rolls[0]["photo"]
    keep = http.post(f"/api/v1/turns/{t['id']}/keep", json={"dice": [1, 1, 1, 1, 1, 1]})
    assert keep.status_code == 200, keep.text
