"""Leftovers of the audits, against a real server: a crash no route handles answers 500 with an
error id and no internals, and its log line cannot be forged by the path."""

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


@pytest.fixture
def errors():
    """ERROR records of dicecam's service log and of uvicorn's, as logged."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level=logging.ERROR)
    handler.emit = records.append
    loggers = [logging.getLogger(name) for name in ("dicecam.service", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(handler)
    yield records
    for logger in loggers:
        logger.removeHandler(handler)


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
