"""The reader as the service holds it, over real HTTP: a model that cannot be loaded is a 503
that names why, is not loaded again for every photo, loses no turn, and once loaded is loaded
once and no longer reported as failing."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from service.api.reader import ReaderService

from dicecam_testing.turns import QueueReader, dice, jpeg, turns_service


class FlakyFactory:
    """Loads a reader: fails while ``broken`` (a model file being replaced), then succeeds."""

    def __init__(self) -> None:
        self.calls = 0
        self.broken = True
        self.reader = QueueReader()

    def __call__(self) -> QueueReader:
        self.calls += 1
        if self.broken:
            raise ValueError("models/dicecam-reader.onnx is truncated")
        return self.reader


@pytest.fixture
def flaky(tmp_path: Path):
    with turns_service(tmp_path) as srv:
        factory = FlakyFactory()
        srv.app.state.reader = ReaderService(factory=factory)
        srv.factory = factory
        yield srv


def photo() -> dict:
    return {"photo": ("roll.jpg", jpeg(), "image/jpeg")}


def test_a_broken_model_is_a_503_tried_again_only_after_a_while_and_no_turn_is_lost(flaky):
    c = flaky.client
    r = c.post("/read", files=photo())
    assert r.status_code == 503, r.text
    assert (
        "could not be loaded (ValueError: models/dicecam-reader.onnx is truncated)"
        in (r.json()["detail"])
    )
    # the next photos within retry_after_s do not load the model again: 503 names the failure
    t = c.post("/turns", json={"player": "heather"}).json()
    r = c.post(f"/turns/{t['id']}/rolls", files=photo())
    assert r.status_code == 503, r.text
    assert r.json()["detail"] == (  # and what a player can do meanwhile, as the first said
        "the dice reader is unavailable (ValueError: models/dicecam-reader.onnx is truncated); "
        "type the values by hand meanwhile"
    )
    assert flaky.factory.calls == 1
    health = c.get("/health").json()["reader"]
    assert health["loaded"] is False and "truncated" in health["error"]
    assert health["configured_model"] is None  # a reader given by the caller: no model file
    # the turn lost nothing, and typed values play it meanwhile
    assert c.get(f"/turns/{t['id']}").json()["rolls"] == 0
    t = c.post(f"/turns/{t['id']}/rolls", json={"values": [1, 2, 2, 3, 5, 6]}).json()
    assert t["awaiting"] == "keep" and t["rolls"] == 1


def test_a_model_fixed_loads_after_the_wait_once_and_its_old_failure_is_forgotten(flaky):
    c = flaky.client
    assert c.post("/read", files=photo()).status_code == 503
    flaky.factory.broken = False
    assert c.post("/read", files=photo()).status_code == 503  # still within the wait
    assert flaky.factory.calls == 1
    flaky.app.state.reader.retry_after_s = 0.0
    flaky.factory.reader.rolls += [dice([1, 5]), dice([2, 2])]
    r = c.post("/read", files=photo())
    assert r.status_code == 200 and r.json()["values"] == [1, 5]
    health = c.get("/health").json()["reader"]
    assert health["loaded"] is True and health["error"] is None
    assert c.post("/read", files=photo()).json()["values"] == [2, 2]
    assert flaky.factory.calls == 2  # loaded once, kept


class CountingReader(QueueReader):
    """Reports one die per photo and counts its reads."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def read(self, image, expected_dice=None):
        self.reads += 1
        self.rolls.append(dice([1]))
        return super().read(image, expected_dice)


def test_two_first_photos_at_once_load_the_model_once():
    loaded = []
    gate = threading.Event()

    def slow_factory() -> QueueReader:
        loaded.append(1)
        gate.wait(5)  # the second photo arrives while the first loads the model
        return CountingReader()

    svc = ReaderService(factory=slow_factory)
    photos = [jpeg(), jpeg()]
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(svc.read, photos[0])
        while not loaded:
            time.sleep(0.01)
        second = pool.submit(svc.read, photos[1])
        time.sleep(0.2)
        gate.set()
        assert first.result().values == [1] and second.result().values == [1]
    assert len(loaded) == 1 and svc.get().reads == 2


def test_the_readings_kept_are_the_most_recently_used():
    reader = CountingReader()
    svc = ReaderService(reader=reader)
    svc.cache_size = 2
    a, b, c = jpeg(), jpeg(), jpeg()
    for p in (a, b, a, c):  # a read again: b is the least recently used when c comes
        svc.read(p)
    assert reader.reads == 3
    svc.read(a)
    svc.read(c)
    assert reader.reads == 3  # both kept
    svc.read(b)
    assert reader.reads == 4  # b was let go of
