"""Floods of logins over a real socket: argon2 (64 MiB a check) runs a few at a time, so 40
concurrent wrong passwords (no account needed: the names are on the roll call) cost time, not
gigabytes; a password longer than any registered one is refused before it is hashed."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx

from service.tracker import security


class CountingHasher:
    """Wraps the real hasher: records how many hashes and checks run at once."""

    def __init__(self, real) -> None:
        self.real, self.running, self.most, self.calls = real, 0, 0, 0
        self.lock = threading.Lock()

    def _count(self, fn, *args):
        with self.lock:
            self.running += 1
            self.calls += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.05)  # long enough for the requests to overlap
            return fn(*args)
        finally:
            with self.lock:
                self.running -= 1

    def hash(self, password: str) -> str:
        return self._count(self.real.hash, password)

    def verify(self, hashed: str, password: str) -> bool:
        return self._count(self.real.verify, hashed, password)


def test_concurrent_logins_and_registrations_hash_a_few_at_a_time(
    sqlite_tracker, join, monkeypatch
):
    http, _ = sqlite_tracker
    victims = [f"alice{k}" for k in range(6)]  # 3 wrong passwords each: under the throttle's 5
    for name in victims:
        join(http, name)
    counting = CountingHasher(security._hasher)
    monkeypatch.setattr(security, "_hasher", counting)
    url = str(http.base_url)

    def attempt(n: int) -> int:
        with httpx.Client(base_url=url, timeout=120) as c:
            if n % 4 == 0:
                body = {"name": f"flood{n}", "password": "hunter2hunter2", "timezone": "UTC"}
                return c.post("/api/v1/players", json=body).status_code
            return c.post(
                "/api/v1/tokens", json={"name": victims[n % 6], "password": "wrong!"}
            ).status_code

    with ThreadPoolExecutor(24) as pool:
        codes = list(pool.map(attempt, range(24)))
    assert sorted(set(codes)) == [201, 401], codes
    assert counting.calls == 24
    assert counting.most <= 4, counting.most  # README: 4 at a time, whatever the threads


def test_a_megabyte_password_is_refused_before_hashing(sqlite_tracker, join, monkeypatch):
    http, _ = sqlite_tracker
    join(http, "alice")
    counting = CountingHasher(security._hasher)
    monkeypatch.setattr(security, "_hasher", counting)
    r = http.post("/api/v1/tokens", json={"name": "alice", "password": "x" * 1_000_000})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == "'password': String should have at most 256 characters"
    r = http.post(
        "/add",
        data={"name": "alice", "password": "x" * 300, "score": "50", "idempotency_key": "k" * 16},
    )
    assert r.status_code == 422 and "at most 256 characters" in r.text
    assert "x" * 300 not in r.text  # the password is never echoed
    assert counting.calls == 0


def test_guessing_one_players_password_is_slowed_and_a_right_one_clears_it(sqlite_tracker, join):
    from service.tracker.throttle import MAX_FAILURES

    http, clock = sqlite_tracker
    join(http, "alice")
    wrong = {"name": "alice", "password": "guess!"}
    for _ in range(MAX_FAILURES):
        assert http.post("/api/v1/tokens", json=wrong).status_code == 401
    r = http.post("/api/v1/tokens", json={"name": "Alice ", "password": "hunter2hunter2"})
    assert r.status_code == 429  # even the right password waits: the name (from here) is the key
    assert int(r.headers["retry-after"]) == 15 * 60
    assert "too many wrong passwords for 'Alice'" in r.json()["detail"]
    r = http.post("/add", data={**wrong, "score": "50", "idempotency_key": "k" * 16})
    assert r.status_code == 429 and "too many wrong passwords" in r.text  # the form too
    join(http, "bob")  # another player is not held up
    clock.set(clock() + timedelta(minutes=15))
    assert (
        http.post("/api/v1/tokens", json={**wrong, "password": "hunter2hunter2"}).status_code == 201
    )
    for _ in range(2):  # each right password clears the count: typos between never add up
        for _ in range(MAX_FAILURES - 1):
            assert http.post("/api/v1/tokens", json=wrong).status_code == 401
        right = {**wrong, "password": "hunter2hunter2"}
        assert http.post("/api/v1/tokens", json=right).status_code == 201
