"""A JSON body nested deeper than the parser goes (about 960 levels, where Python's stack runs
out) is refused 400 saying what was expected, by the service and by its tracker, mounted or on
its own; FastAPI answered it with a bare "There was an error parsing the body". A body nested
JSON_DEPTH levels deep is parsed (its route judges it)."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.http_errors import JSON_DEPTH
from service.settings import Settings
from service.tracker import create_app as create_tracker_app

JSON = {"content-type": "application/json"}
TOO_DEEP = (
    f"expected a JSON body nested at most {JSON_DEPTH} levels deep (arrays and objects "
    "together), got one nested too deep for the JSON parser"
)


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.fixture
def service(tmp_path, sqlite_url, serve):
    """A real service with its tracker mounted at /tracker."""
    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        tracker_app=create_tracker_app(sqlite_url),
        submitter=None,
    )
    with httpx.Client(base_url=serve(app).url, timeout=60) as client:
        yield client


@pytest.mark.parametrize("path", ["/api/v1/turns", "/tracker/api/v1/turns"])
def test_a_body_nested_deeper_than_the_parser_goes_says_what_was_expected(service, path):
    body = '{"player": "deb", "reading": ' + nested(1000) + "}"
    answer = service.post(path, content=body, headers=JSON)
    assert answer.status_code == 400, answer.text
    assert answer.json() == {"detail": TOO_DEEP}


def test_the_tracker_on_its_own_says_so_too(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    body = '{"player": "deb", "score": 0, "rolls": [{"values": [1], "reading": ' + nested(1000)
    answer = http.post("/api/v1/turns", content=body + "}]}", headers={**auth, **JSON})
    assert answer.status_code == 400, answer.text
    assert answer.json() == {"detail": TOO_DEEP}
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []


def test_a_body_nested_json_depth_levels_deep_is_parsed(service):
    body = '{"player": "deb", "reading": ' + nested(JSON_DEPTH - 1) + "}"
    answer = service.post("/api/v1/turns", content=body, headers=JSON)
    assert answer.status_code != 500, answer.text
    assert answer.json()["detail"] != TOO_DEEP
    assert "not valid JSON" not in answer.json().get("detail", "")
    assert answer.status_code != 400, answer.text
