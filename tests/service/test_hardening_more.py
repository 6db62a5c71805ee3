"""Leftovers of the audits, against a real server: a crash no route handles answers 500 with an
error id and no internals, and its log line cannot be forged by the path; a Solitaire Dice split
and a Low-High keep say in the 422 and in the schema which faces and totals they take."""

from __future__ import annotations

import logging

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.sheet_store import SheetStore

from dicecam_testing.turns import QueueReader

FORGED = "refused POST tokens (429): too many wrong passwords for 'bob'"  # no slash: one id
SECRET = "sqlite3.OperationalError at /home/dicecam/.dicecam/turns.sqlite3"


@pytest.fixture
def service(tmp_path, serve):
    """The service without a tracker on a real server."""
    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        reader=QueueReader(),
        tracker_app=None,
        submitter=None,
    )
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http


def test_a_crash_says_only_that_it_failed_and_its_log_line_cannot_be_forged(
    service, errors, monkeypatch
):
    def crash(self, game_id, game):  # a route's code that fails, echoing what came
        raise RuntimeError(f"{SECRET}: no row for {game_id!s}")

    monkeypatch.setattr(SheetStore, "get", crash)
    path = "/api/v1/sheets/x%0A" + FORGED.replace(" ", "%20") + "%1B%5B2J"
    r = service.get(path)
    assert r.status_code == 500, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.headers["x-content-type-options"] == "nosniff"  # inside the security headers
    body = r.json()
    error_id = body["error_id"]
    assert body["detail"] == (
        f"the service failed unexpectedly: error {error_id}, told in the server's log"
    )
    for internal in ("RuntimeError", "sqlite3", "/home/", "no row", "refused"):
        assert internal not in r.text

    (record,) = errors  # logged once: not again by uvicorn, unescaped
    assert record.name == "dicecam.service" and record.levelno == logging.ERROR
    first, *traceback = record.getMessage().split("\n")
    assert first == (
        f"unhandled error {error_id} on GET /api/v1/sheets/x\\n{FORGED}\\x1b[2J (500): RuntimeError"
    )
    assert traceback and all(line.startswith("    ") for line in traceback)  # indented
    assert all(line.isprintable() for line in traceback)
    assert traceback[-1] == f"    RuntimeError: {SECRET}: no row for x\\n{FORGED}\\x1b[2J"

    monkeypatch.undo()  # the service goes on
    assert service.get("/api/v1/health").json()["status"] == "ok"
    assert service.get("/api/v1/sheets/x").status_code == 404


def test_two_crashes_have_two_error_ids(service, errors, monkeypatch):
    def crash(self, game_id, game):
        raise KeyError(game_id)

    monkeypatch.setattr(SheetStore, "get", crash)
    ids = [service.get(f"/api/v1/sheets/{n}").json()["error_id"] for n in ("a", "b")]
    assert len(set(ids)) == 2
    assert [r.getMessage().split(" ")[2] for r in errors] == ids


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"reject": 3, "combos": [13, 4]}, "'combos.0': expected a combo total 2 to 12, got 13"),
        ({"reject": 3, "combos": [4, 1]}, "'combos.1': expected a combo total 2 to 12, got 1"),
        ({"reject": 7, "combos": [4, 8]}, "'reject': expected a face 1 to 6, got 7"),
        ({"reject": 0, "combos": [4, 8]}, "'reject': expected a face 1 to 6, got 0"),
        ({"reject": True, "combos": [4, 8]}, "'reject': Input should be a valid integer"),
        ({"reject": 3, "combos": [4.0, 8]}, "'combos.0': Input should be a valid integer"),
        ({"reject": "3", "combos": [4, 8]}, "'reject': Input should be a valid integer"),
    ],
)
def test_a_split_says_which_faces_and_totals_it_takes(service, body, detail):
    sheet = service.post("/api/v1/sheets", json={"player": "ann"}).json()
    url = f"/api/v1/sheets/{sheet['id']}"
    assert service.post(url + "/split", json=body).status_code == 422  # before a roll: not 409
    service.post(url + "/rolls", json={"values": [1, 3, 4, 4, 6]}).raise_for_status()
    r = service.post(url + "/split", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(detail), r.json()
    held = service.get(url).json()  # nothing marked; the roll still waits for its split
    assert held["awaiting"] == "split" and held["rolls"] == 1
    assert not any(held["marks"].values()) and not any(held["rejects"].values())
    r = service.post(url + "/split", json={"reject": 3, "combos": [5, 10]})
    assert r.status_code == 200, r.text
    assert r.json()["marks"]["5"] == r.json()["marks"]["10"] == 1


@pytest.mark.parametrize(
    ("face", "detail"),
    [(0, "'face': expected a face 1 to 6, got 0"), (True, "'face': Input should be a valid")],
)
def test_a_low_high_keep_says_which_faces_it_takes(service, face, detail):
    turn = service.post("/api/v1/low-high/turns", json={"player": "ann"}).json()
    url = f"/api/v1/low-high/turns/{turn['id']}"
    service.post(url + "/rolls", json={"values": [1] * 6 + [6] * 7}).raise_for_status()
    r = service.post(url + "/keep", json={"face": face})
    assert r.status_code == 422 and r.json()["detail"].startswith(detail), r.text
    assert service.get(url).json()["awaiting"] == "keep"


def test_the_schema_shows_the_bounds_of_faces_and_totals(service):
    schemas = service.get("/openapi.json").json()["components"]["schemas"]
    split = schemas["Split"]["properties"]
    assert split["combos"]["items"] == {"type": "integer", "minimum": 2, "maximum": 12}
    assert split["combos"]["minItems"] == split["combos"]["maxItems"] == 2
    face = {"type": "integer", "minimum": 1, "maximum": 6}
    assert face in split["reject"]["anyOf"] and {"type": "null"} in split["reject"]["anyOf"]
    keep = schemas["KeepSet"]["properties"]["face"]
    assert {k: keep[k] for k in face} == face
