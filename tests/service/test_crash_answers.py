"""Crash answers and bodies against real servers: a Farkle keep takes JSON integers 1 to 6
only."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.turns import QueueReader


def _service(tmp_path, serve, reader) -> httpx.Client:
    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        reader=reader,
        tracker_app=None,
        submitter=None,
    )
    return httpx.Client(base_url=serve(app).url, timeout=30)


def _farkle_turn_at_keep(http: httpx.Client) -> tuple[str, dict]:
    """A five-dice Farkle turn's address and its best keep, the roll waiting for a keep."""
    turn = http.post("/api/v1/turns", json={"player": "ann", "game": "farkle-five"}).json()
    url = f"/api/v1/turns/{turn['id']}"
    r = http.post(url + "/rolls", json={"values": [1, 3, 3, 3, 4]})
    r.raise_for_status()
    return url, r.json()["keeps"][0]


@pytest.mark.parametrize(
    ("dice", "detail"),
    [
        ([True], "'dice.0': Input should be a valid integer"),
        ([3.0, 3, 3], "'dice.0': Input should be a valid integer"),
        ([3, "3", 3], "'dice.1': Input should be a valid integer"),
        ([1, 7], "'dice.1': expected a face 1 to 6, got 7"),
        ([0], "'dice.0': expected a face 1 to 6, got 0"),
        ([], "'dice': List should have at least 1 item"),
    ],
)
def test_a_farkle_keep_takes_json_integers_1_to_6_only(tmp_path, serve, dice, detail):
    with _service(tmp_path, serve, QueueReader()) as http:
        url, best = _farkle_turn_at_keep(http)
        r = http.post(url + "/keep", json={"dice": dice})
        assert r.status_code == 422, r.text
        assert r.json()["detail"].startswith(detail), r.json()
        held = http.get(url).json()  # nothing kept: the roll still waits for its keep
        assert (held["awaiting"], held["turn_points"], held["dice_left"]) == ("keep", 0, 5)
        r = http.post(url + "/keep", json={"dice": best["dice"]})
        assert r.status_code == 200 and r.json()["turn_points"] == best["points"] > 0, r.text


def test_the_schema_shows_a_keeps_faces_1_to_6(tmp_path, serve):
    with _service(tmp_path, serve, QueueReader()) as http:
        schemas = http.get("/openapi.json").json()["components"]["schemas"]
    items = schemas["Keep"]["properties"]["dice"]["items"]
    assert items == {"type": "integer", "minimum": 1, "maximum": 6}
