"""Hostile inputs to every operation of the service's OpenAPI schema, against a real server
(with the embedded tracker): each request the schema rules out (a field of the wrong JSON type,
NaN, a huge or negative number, a 10,000-character or NUL-bearing string, a missing or unknown
key, a body that is not JSON or not of the type declared, a form without its photo or with one
that is no image, an id that is no id, a query value out of range) is refused with a 4xx whose
JSON ``detail`` is a sentence (no traceback), within seconds; a request the schema allows is at
least no 5xx. The cases are made from the schema itself, so a new operation is swept too, and
``test_every_operation_is_swept`` fails where one gets no case."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from vision import Reading

from dicecam_testing.hostile import NAN, Case, cases
from dicecam_testing.json_schema import SECRET, inline_refs, text_valid, valid
from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import dice, jpeg

pytestmark = pytest.mark.slow

with tempfile.TemporaryDirectory() as _tmp:
    SCHEMA: dict[str, Any] = inline_refs(
        create_app(Settings(data_dir=Path(_tmp)), tracker_app=None).openapi()
    )

OPERATIONS = [
    (method.upper(), path)
    for path, ops in SCHEMA["paths"].items()
    for method in ops
    if method in {"get", "put", "post", "delete", "patch"}
]


# -- the server --------------------------------------------------------------------------------


class SixDiceReader:
    """Decodes each photo for real (an undecodable one is refused as by the shipped reader) and
    sees six dice, 1 to 6."""

    def read(self, image, expected_dice=None) -> Reading:
        from vision import load_image

        img = load_image(image)
        return Reading(img.width, img.height, dice([1, 2, 3, 4, 5, 6]), expected_dice=expected_dice)


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[httpx.Client]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("hostile"), outbox_retry_s=0)
    app = create_app(settings, reader=SixDiceReader())
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as http:
        yield http


def ids(http: httpx.Client) -> dict[str, str]:
    """Fresh games to aim at: a path's ids are of the games that path takes."""
    made = {}
    for name, path in [
        ("turn", "/api/v1/turns"),
        ("sheet", "/api/v1/sheets"),
        ("low-high", "/api/v1/low-high/turns"),
    ]:
        r = http.post(path, json={"player": "ann"})
        assert r.status_code == 201, r.text
        made[name] = r.json()["id"]
    return made


def fill(path: str, made: dict[str, str], bad: dict[str, str]) -> str:
    game = "low-high" if "/low-high/" in path else "sheet" if "/sheets/" in path else "turn"
    return re.sub(r"\{(\w+)\}", lambda m: bad.get(m.group(1), made[game]), path)


def problems(r: httpx.Response, case: Case, documented: dict[str, Any]) -> str | None:
    """What is wrong with the answer ``r`` to ``case``, or None; ``documented``: the
    operation's ``responses``."""
    if r.status_code >= 500:
        return f"{r.status_code}: {r.text[:300]}"
    if case.refuse and not 400 <= r.status_code < 500:
        return f"accepted ({r.status_code}) what the schema rules out: {r.text[:200]}"
    if SECRET in r.text:
        return f"{r.status_code} echoes the password sent: {r.text[:200]}"
    if str(r.status_code) not in documented:
        return f"{r.status_code}, a status its schema does not list: {r.text[:200]}"
    if r.status_code < 400:
        return None
    if "Traceback" in r.text or 'File "' in r.text:
        return f"a traceback in the answer: {r.text[:300]}"
    if not r.headers.get("content-type", "").startswith("application/json"):
        return f"{r.status_code} not JSON: {r.headers.get('content-type')} {r.text[:200]}"
    body = r.json()
    if not isinstance(body, dict) or not isinstance(body.get("detail"), str) or not body["detail"]:
        return f"{r.status_code} without a detail sentence: {r.text[:300]}"
    if len(body["detail"]) > 2000:
        return f"{r.status_code} with a detail of {len(body['detail'])} characters"
    return None


def state(http: httpx.Client, made: dict[str, str]) -> dict[str, Any]:
    """What the service holds that a request could change: the games aimed at, calibration."""
    paths = {
        "turn": "/api/v1/turns/{id}",
        "sheet": "/api/v1/sheets/{id}",
        "low-high": "/api/v1/low-high/turns/{id}",
        "calibration": "/api/v1/calibration",
    }
    return {name: http.get(fill(path, made, {})).json() for name, path in paths.items()}


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_hostile_requests_are_refused_with_a_sentence(service, method, path):
    """Each hostile request gets a 4xx sentence in time, and a refused one changes nothing."""
    op = SCHEMA["paths"][path][method.lower()]
    made = ids(service)
    held, found = state(service, made), []
    for case in cases(op):
        url = fill(path, made, case.path)
        try:
            r = service.request(
                method,
                url,
                params=case.params,
                content=case.content,
                headers=case.headers,
                files=case.files,
                data=case.data,
            )
        except httpx.TimeoutException:
            found.append(f"{case.what}: no answer in 20 s")
            continue
        if (wrong := problems(r, case, op["responses"])) is not None:
            found.append(f"{case.what}: {wrong}")
        if method != "GET":
            now = state(service, made)
            if r.status_code >= 400 and now != held:
                found.append(f"{case.what}: refused ({r.status_code}) yet changed the state")
            held = now
    assert not found, f"{len(found)} wrong answers:\n" + "\n".join(found[:40])


def test_every_operation_is_swept():
    """Each operation of the schema gets requests, and one that takes any input gets requests
    it must refuse; each path parameter is filled."""
    assert len(OPERATIONS) >= 27
    for method, path in OPERATIONS:
        op = SCHEMA["paths"][path][method.lower()]
        made = list(cases(op))
        assert made, (method, path)
        takes = op.get("parameters") or op.get("requestBody")
        assert not takes or any(c.refuse for c in made), (method, path)
        assert "{" not in fill(path, {"turn": "t", "sheet": "s", "low-high": "l"}, {})


def test_the_sweep_knows_a_bad_value_from_a_good_one():
    """The schema check the sweep relies on: it rules out what FastAPI refuses."""
    keep = SCHEMA["components"]["schemas"]["Keep"]
    assert valid({"dice": [1, 5]}, keep)
    assert not valid({"dice": [7]}, keep) and not valid({"dice": [NAN]}, keep)
    assert not valid({"dice": [1], "zzz": 1}, keep) and not valid({}, keep)
    assert text_valid("3", {"type": "integer", "minimum": 0})
    assert not text_valid("-1", {"type": "integer", "minimum": 0})
    assert not text_valid("3_0", {"type": "integer"}) and not text_valid("abc", {"type": "integer"})


def test_a_long_input_is_echoed_clipped_with_its_length(service):
    """An id, a game or an address sent 5,000 characters long is named by its first 80 and its
    length: the whole of it came back in the sentence (and in the log of refusals)."""
    long = "y" * 5000
    r = service.get(f"/api/v1/turns/{long}")
    assert r.status_code == 404
    assert r.json()["detail"] == (
        f"no turn with id '{long[:80]}...' (5000 characters) (turns are kept a day)"
    )
    r = service.post("/api/v1/score", params={"game": long}, json={"values": [1]})
    assert r.status_code == 422 and r.json()["detail"].startswith(
        f"unknown game '{long[:80]}...' (5000 characters); expected one of: morning-roll"
    )
    r = service.get(f"/api/v1/{long}")
    assert r.status_code == 404
    assert r.json()["detail"] == (
        f"nothing at /api/v1/{long[:72]}... (5008 characters) (the addresses served are in "
        "/openapi.json)"
    )
    r = service.get("/api/v1/turns/abc")  # a short one stays whole
    assert r.json()["detail"] == "no turn with id 'abc' (turns are kept a day)"


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_json_body_of_another_type_is_named_by_its_type_not_echoed(service, kind):
    """JSON sent as another type reached the route as bytes: 422 'Input should be a valid
    dictionary ... (got b'{"name": "ann", "password": ...')', the password echoed (and logged)."""
    body = json.dumps({"name": "ann", "password": SECRET}).encode()
    r = service.post("/api/v1/tracker/tokens", content=body, headers={"Content-Type": kind})
    assert r.status_code == 415
    came = f"content-type {kind!r}" if kind else "no content-type"
    assert r.json() == {
        "detail": f"expected a JSON body (content-type 'application/json'), got {came}"
    }
    r = service.post("/api/v1/turns", content=b'{"player": "ann"}', headers={"Content-Type": kind})
    assert r.status_code == 415 and r.json()["detail"].endswith(came)


@pytest.mark.parametrize("path", ["/api/v1/read", "/api/v1/score?game=greed"])
def test_a_multipart_form_without_a_boundary_is_named_plainly(service, path):
    """The 400 passed on Starlette's exception whole: '... form: 400: Missing boundary in
    multipart.', a status inside the sentence and not the type that came."""
    kind = "multipart/form-data"
    r = service.post(path, content=b"--x\r\n", headers={"Content-Type": kind})
    assert r.status_code == 400
    assert r.json() == {
        "detail": "could not parse the multipart form: Missing boundary in multipart "
        "(content-type 'multipart/form-data')"
    }


def test_a_photo_whose_filename_is_thousands_of_characters_is_refused_saying_why(service):
    """The multipart library refuses a part's headers over its limit; Starlette said only
    'Invalid multipart data', which left the sender guessing. A filename of 100 characters is
    read as usual."""
    photo = jpeg()
    r = service.post("/api/v1/read", files={"photo": ("a" * 10_000 + ".jpg", photo, "image/jpeg")})
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert detail.startswith(
        "could not parse the multipart form: Maximum header size exceeded (a part's headers, "
        "its filename among them, are too long) (content-type 'multipart/form-data; boundary="
    ), detail
    r = service.post("/api/v1/read", files={"photo": ("a" * 100 + ".jpg", photo, "image/jpeg")})
    assert r.status_code == 200, r.text
