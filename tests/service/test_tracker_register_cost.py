"""A registration refused for its name (taken, or reading like a registered one) costs no argon2
hash. It gives back its place in the limit per address, so before, anyone could have the
tracker hash without end by registering a taken name again and again (15 in a row from one
address, past the limit of 10, each about 0.5 s of argon2 at 64 MiB), holding up the logins
that wait for the same few argon2 slots. Here every slot is held by the test, as a flood of
hashes would hold them: a refused name is still answered at once, on the API and the form,
while a free name waits its turn."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from service.tracker import security

RIGHT = "hunter2hunter2"


@contextmanager
def argon2_busy() -> Iterator[None]:
    """Every argon2 slot of this process (the served tracker's) taken, as by other hashes."""
    for _ in range(security.ARGON2_AT_ONCE):
        security._slots.acquire()
    try:
        yield
    finally:
        for _ in range(security.ARGON2_AT_ONCE):
            security._slots.release()


@pytest.mark.parametrize("name", ["wendy", "WENDY ", "vvendy"])  # taken, so, reads alike
def test_a_refused_name_is_answered_without_a_hash(tracker, join, name):
    http, _ = tracker
    join(http, "wendy")
    body = {"name": name, "password": RIGHT, "timezone": "UTC"}
    with argon2_busy():
        r = http.post("/api/v1/players", json=body, timeout=5)  # before: waited for a slot
        assert r.status_code == 409, r.text
        r = http.post("/register", data=body, timeout=5)
        assert r.status_code == 409, r.text
        assert "already registered" in r.text or "already taken" in r.text
        with pytest.raises(httpx.ReadTimeout):  # a free name is hashed: it waits for a slot
            http.post("/api/v1/players", json={**body, "name": "bea"}, timeout=1)
    for _ in range(100):  # bea's registration goes on once a slot is free
        names = [p["player"] for p in http.get("/api/v1/rollcall").json()["players"]]
        if "bea" in names:
            break
        time.sleep(0.1)
    assert sorted(names) == ["bea", "wendy"]
