"""The OpenAPI schemas tell clients the truth.

schemathesis reads the schema of a real running service (and of the tracker), sends requests it
generates from it over HTTP, and checks each answer against the schema: no server error, only
documented statuses, error bodies of the documented shape, the documented content types, and
an ``Allow`` header on 405 naming every method of the path. It does not require every
schema-valid request to be accepted: a photo field of random bytes is valid to the schema and
is rightly refused (415), as is a boundary whose corners coincide (422).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.app import create_app  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.tracker import create_app as create_tracker_app  # noqa: E402

from dicecam_testing.servers import LiveServer  # noqa: E402

pytestmark = pytest.mark.slow

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

FUZZ = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,  # the same requests on every run
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def service_url(tmp_path_factory):
    app = create_app(Settings(data_dir=tmp_path_factory.mktemp("contract")), tracker_app=None)
    with LiveServer(app) as server:
        yield server.url


@pytest.fixture(scope="module")
def tracker_url(tmp_path_factory):
    # a database file, as `dicecam serve` keeps. An in-memory one ("sqlite://") is a single
    # connection that the server's threads share: requests that overlap can fail (a 500 on
    # GET /api/v1/rollcall in a full run of the suite; four threads of requests at once give
    # 500s there, none on a file)
    url = f"sqlite:///{tmp_path_factory.mktemp('tracker') / 'tracker.sqlite3'}"
    with LiveServer(create_tracker_app(url)) as server:
        yield server.url


def _schema_of(app):
    """The app's OpenAPI schema, loaded at collection (schemathesis parametrizes from it)."""
    return schemathesis.openapi.from_dict(app.openapi())


with tempfile.TemporaryDirectory() as _tmp:
    service = _schema_of(create_app(Settings(data_dir=Path(_tmp)), tracker_app=None))
tracker = _schema_of(create_tracker_app("sqlite://"))


@service.parametrize()
@FUZZ
def test_service_answers_as_its_schema_says(case, service_url):
    case.call_and_validate(base_url=service_url, checks=CHECKS)


@tracker.parametrize()
@FUZZ
def test_tracker_answers_as_its_schema_says(case, tracker_url):
    case.call_and_validate(base_url=tracker_url, checks=CHECKS)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PATCH", "/api/v1/calibration", "DELETE, GET, HEAD, POST, PUT"),
        ("DELETE", "/api/v1/turns/abc", "GET, HEAD"),
        ("GET", "/api/v1/read", "POST"),
    ],
)
def test_405_names_every_method_of_the_path(service_url, method, path, allow):
    import httpx

    r = httpx.request(method, service_url + path, timeout=30)
    assert r.status_code == 405
    assert r.headers["allow"] == allow
    assert r.json() == {"detail": f"{method} is not taken at {path}; expected {allow}"}


def test_an_address_no_route_serves_is_named(service_url, tracker_url):
    import httpx

    r = httpx.get(service_url + "/api/v1/nope", timeout=30)
    assert r.status_code == 404
    assert r.json() == {
        "detail": "nothing at /api/v1/nope (the addresses served are in /openapi.json)"
    }
    r = httpx.get(tracker_url + "/api/v1/nope", timeout=30)  # the tracker's API: JSON too
    assert r.status_code == 404 and "nothing at /api/v1/nope" in r.json()["detail"]
    r = httpx.get(tracker_url + "/nope", timeout=30)  # a page: a person reads the answer
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in r.text and "nothing at /nope" in r.text


def test_error_answers_are_documented_as_sentences(service_url):
    """Every documented error is an ErrorBody (a ``detail`` string), and a real error fits it."""
    import httpx

    schema = httpx.get(service_url + "/openapi.json", timeout=30).json()
    assert "HTTPValidationError" not in schema.get("components", {}).get("schemas", {})
    op = schema["paths"]["/api/v1/turns/{turn_id}/rolls"]["post"]
    assert set(op["responses"]) >= {"200", "400", "404", "409", "413", "415", "422", "500", "503"}
    ref = op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/ErrorBody")
    body = schema["components"]["schemas"]["ErrorBody"]
    assert body["properties"]["detail"]["type"] == "string"
    r = httpx.post(service_url + "/api/v1/turns", json={"player": ""}, timeout=30)
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)


def test_tracker_ids_past_64_bits_are_refused_not_crashed(tracker_url):
    """SQLite keeps 64-bit integers: a larger turn id or year was a 500 (OverflowError)."""
    import httpx

    huge = str(2**90)
    for path in (
        f"/api/v1/turns/{huge}",
        f"/api/v1/turns/{huge}/rolls/1/photo.jpg",
        f"/turns/{huge}",
        f"/rounds/{huge}",
    ):
        r = httpx.get(tracker_url + path, timeout=30)
        assert r.status_code == 422, (path, r.status_code, r.text)
        assert "less than or equal" in (r.json()["detail"] if "/api/" in path else r.text)
