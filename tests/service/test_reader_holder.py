"""The reader as the service holds it, over real HTTP: a model that cannot be loaded is a 503
that names why, is not loaded again for every photo, loses no turn, and once loaded is loaded
once and no longer reported as failing."""

from __future__ import annotations

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
    assert r.json()["detail"] == (
        "the dice reader is unavailable: ValueError: models/dicecam-reader.onnx is truncated"
    )
    assert flaky.factory.calls == 1
    health = c.get("/health").json()["reader"]
    assert health["loaded"] is False and "truncated" in health["error"]
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
