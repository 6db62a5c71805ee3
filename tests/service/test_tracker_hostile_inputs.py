"""Hostile input to every operation of the tracker's JSON API, read from its /openapi.json, and
to its four forms, over a real tracker on a real SQLite database: wrong JSON types for each
field of a body, missing and unknown fields, bodies that are not JSON objects or not JSON, the
wrong Content-Type, path and query values that are not what the route takes, and a bearer
token that is garbage, of another scheme, expired or of another player.

Each is answered 4xx with the tracker's error shape (``{"detail": "..."}``; a form page
re-shown with its problems), never a 5xx, a hang or a traceback, and the database holds
exactly what it held before (every row of every table). An operation added to the schema and
left out here fails :func:`test_every_operation_of_the_schema_is_swept`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from service.tracker import create_app, store
from service.tracker.models import Base, Player

PASSWORD = "hunter2hunter2"

BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/v1/players"): {"name": "newbie", "password": PASSWORD, "timezone": "UTC"},
    ("POST", "/api/v1/tokens"): {"name": "alice", "password": PASSWORD},
    ("PUT", "/api/v1/me/timezone"): {"timezone": "Europe/Paris"},
    ("PUT", "/api/v1/me/password"): {"password": PASSWORD, "new_password": "brand-new-pass"},
    ("POST", "/api/v1/turns"): {"player": "alice", "score": 300, "idempotency_key": "k" * 12},
    ("PATCH", "/api/v1/turns/{turn_id}"): {"score": 100, "reason": "typo"},
}
"""A body each operation taking one would accept: the sweep spoils one thing of it at a time."""

GOOD_PATHS = {"turn_id": "{turn}", "position": "0", "name": "alice"}
BAD_PATHS = {
    "turn_id": ["abc", "0", "-1", "1.5", "99999", str(10**30), "9223372036854775808", "%00"],
    "position": ["abc", "-1", "1.5", "1001", str(10**30)],
    "name": ["nobody", "%00", "x" * 10_000, "%C3%A9" * 50, "%E2%80%AE%07"],
}
BAD_QUERIES = {
    "round": ["abc", "0", "-1", "10000", "1e3", str(10**30), ""],
    "limit": ["0", "-1", "abc", "501", str(10**30)],
    "before": ["2026-02-30", "0000-01-01", "not-a-day", "2026-6-1", "2026-06-15T00:00", "%00"],
    "tz": ["Nope/Zone", "x" * 10_000, "%00", "europe/paris", "../../etc/passwd"],
}
STRING = [None, 10**30, -50, 1.5, True, [], {}, ["x"], {"a": 1}, "x" * 10_000, "a\x00b"]
INTEGER = [None, "x", "1e3", "2026-02-30", 1.5, True, [], {}, 10**30, -50, -(10**30), 49]
NUMBER = ["x", True, [], {}, 10**30, -1, "NaN", "2026-02-30"]
ARRAY = [
    None,
    "x",
    5,
    {},
    [None],
    ["x"],
    [{"values": [7]}],
    [{"values": [True]}],
    [{"values": [1], "reading": "x"}],
    [{"values": [1], "photo_jpeg_b64": "not base64!"}],
    [{"values": [1]}] * 61,
]
"""Values the fields of each JSON type cannot take (a string field: another type, too long, a
NUL character)."""

LATIN_1 = '{"name": "café", "player": "café", "timezone": "Europe/Paris"}'.encode("latin-1")
LONG_NUMBER = b'{"score": 1' + b"0" * 5000 + b"}"
"""Bodies the JSON parser cannot read: not UTF-8, a number of more digits than int() takes."""
BARE = {"There was an error parsing the body", "Not Found", "Internal Server Error", ""}
"""Starlette's and FastAPI's bare answers, which name neither what was expected nor what came."""


@pytest.fixture
def world(sqlite_url, clock, monkeypatch, serve) -> Iterator[dict[str, Any]]:
    """A real tracker with an administrator ('tom'), players alice and bob (tokens), an expired
    token of alice's and one turn of alice's."""
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_NAME", "tom")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "admin-password")
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        auth = {}
        for name, password in [
            ("alice", PASSWORD),
            ("bob", "bobs-password"),
            ("tom", "admin-password"),
        ]:
            if name != "tom":
                body = {"name": name, "password": password, "timezone": "UTC"}
                assert http.post("/api/v1/players", json=body).status_code == 201
            r = http.post("/api/v1/tokens", json={"name": name, "password": password})
            assert r.status_code == 201, r.text
            auth[name] = {"Authorization": f"Bearer {r.json()['token']}"}
        with app.state.sessionmaker() as session:
            alice = session.scalars(select(Player).where(Player.name == "alice")).one()
            old = clock() - timedelta(days=3)
            expired = store.issue_token(session, alice, old, days=1)
            session.commit()
        body = {"player": "alice", "score": 600, "idempotency_key": "first-turn-1"}
        r = http.post("/api/v1/turns", json=body, headers=auth["alice"])
        assert r.status_code == 201, r.text
        yield {
            "app": app,
            "http": http,
            "auth": auth,
            "expired": {"Authorization": f"Bearer {expired}"},
            "turn": r.json()["id"],
        }
    app.state.db.dispose()


def rows(app) -> dict[str, list[tuple]]:
    """Every row of every table of the tracker's database."""
    with app.state.sessionmaker() as session:
        return {
            t.name: sorted(map(tuple, session.execute(t.select()).all()), key=repr)
            for t in Base.metadata.sorted_tables
        }


def operations(http: httpx.Client) -> dict[tuple[str, str], dict]:
    """The JSON API's operations as its /openapi.json lists them."""
    paths = http.get("/openapi.json").json()["paths"]
    return {(m.upper(), p): op for p, ops in paths.items() for m, op in ops.items()}


def schema_of(spec: dict, ref: dict) -> dict:
    return spec["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]] if "$ref" in ref else ref


def wrong_values(prop: dict) -> list[Any]:
    """What a field of schema ``prop`` cannot take (null left out where it is nullable)."""
    kinds = [s.get("type") for s in prop.get("anyOf", [prop])]
    values = (
        INTEGER
        if "integer" in kinds
        else NUMBER
        if "number" in kinds
        else ARRAY
        if "array" in kinds
        else STRING
    )
    return [v for v in values if not (v is None and "null" in kinds)]


def hostile_requests(world: dict, method: str, path: str, op: dict, spec: dict) -> Iterator[dict]:
    """The hostile requests for one operation: each a dict of httpx request arguments."""
    auth = world["auth"]
    owner = auth["tom"] if method == "PATCH" else auth["alice"]
    filled = path.format(**{k: v.format(turn=world["turn"]) for k, v in GOOD_PATHS.items()})
    params = [p for p in op.get("parameters", []) if p["in"] == "path"]
    for param in params:
        for bad in BAD_PATHS[param["name"]]:
            other = {k: v.format(turn=world["turn"]) for k, v in GOOD_PATHS.items()}
            url = path.format(**{**other, param["name"]: bad})
            yield {"url": url, "headers": owner, "json": BODIES.get((method, path))}
    for param in [p for p in op.get("parameters", []) if p["in"] == "query"]:
        for bad in BAD_QUERIES[param["name"]]:
            yield {"url": f"{filled}?{param['name']}={bad}", "headers": owner}
    takes_token = any(p["name"].lower() == "authorization" for p in op.get("parameters", []))
    if takes_token:
        good_body = BODIES.get((method, path))
        for headers in [
            {"Authorization": "Bearer garbage"},
            {"Authorization": "Bearer " + "x" * 10_000},
            {"Authorization": "Basic YWxpY2U6aHVudGVyMmh1bnRlcjI="},
            {"Authorization": "Bearer"},
            world["expired"],
        ]:
            if headers is world["expired"] and path == "/api/v1/tokens/current":
                continue  # logging out revokes an expired token too (its documented 204)
            yield {"url": filled, "headers": headers, "json": good_body}
        if method == "PATCH":  # another player's token: not an administrator
            yield {"url": filled, "headers": auth["bob"], "json": good_body}
        if (method, path) == ("POST", "/api/v1/turns"):  # bob's token, alice's turn
            yield {"url": filled, "headers": auth["bob"], "json": good_body}
        if (method, path) == ("PUT", "/api/v1/me/password"):  # bob's token, alice's password
            yield {"url": filled, "headers": auth["bob"], "json": good_body}
    if not op.get("parameters") and "requestBody" not in op:  # takes nothing: junk ignored
        for junk in [
            {"headers": {"Authorization": "Bearer garbage"}},
            {"params": {"limit": "%00", "round": "x" * 10_000}},
            {"headers": {"Content-Type": "application/json"}, "content": b"{not json"},
        ]:
            yield {"url": filled, "ignored": True, **junk}
    if "requestBody" not in op:
        return
    body = BODIES[(method, path)]
    schema = schema_of(spec, op["requestBody"]["content"]["application/json"]["schema"])
    for field, prop in schema["properties"].items():
        for bad in wrong_values(prop):
            yield {"url": filled, "headers": owner, "json": {**body, field: bad}}
    for field in schema.get("required", []):
        yield {
            "url": filled,
            "headers": owner,
            "json": {k: v for k, v in body.items() if k != field},
        }
    json_type = {"Content-Type": "application/json"}
    for content in [
        b"{not json",
        b"",
        b"null",
        b"[]",
        b'"x"',
        b"7",
        b"\xff\xfe\x00",
        b'{"a":1' * 3,
        LATIN_1,
        LONG_NUMBER,
    ]:
        yield {"url": filled, "headers": {**owner, **json_type}, "content": content}
    yield {"url": filled, "headers": owner, "json": {**body, "extra": 1}}
    yield {"url": filled, "headers": owner, "json": {**body, "is_admin": True}}
    raw = httpx.Request("POST", "/", json=body).content
    for kind in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]:
        yield {"url": filled, "headers": {**owner, "Content-Type": kind}, "content": raw}
    yield {"url": filled, "headers": owner, "data": {k: str(v) for k, v in body.items()}}


def refusal_problem(r: httpx.Response) -> str | None:
    """What is wrong with ``r`` as a refusal of a hostile request (a password sent echoed
    back among them), or None."""
    if not 400 <= r.status_code < 500 or "Traceback" in r.text or PASSWORD in r.text:
        return f"{r.status_code} {r.text[:300]}"
    detail = r.json().get("detail")
    if not isinstance(detail, str) or detail in BARE:
        return f"{r.status_code} {detail!r}"
    return None


def test_every_operation_of_the_schema_is_swept(world):
    """Each operation gets hostile requests, and each is refused 4xx with a sentence; the
    database is the same, row for row, after them all."""
    http, app = world["http"], world["app"]
    spec = http.get("/openapi.json").json()
    ops = operations(http)
    before = rows(app)
    swept: dict[tuple[str, str], int] = {}
    wrong = []
    for (method, path), op in ops.items():
        for request in hostile_requests(world, method, path, op, spec):
            if request.pop("ignored", False):  # the operation's answer, as if it had not come
                plain = http.request(method, request["url"])
                r = http.request(method, **request)
                if (r.status_code, r.text) != (plain.status_code, plain.text):
                    wrong.append(f"{method} {str(request)[:200]}: {r.status_code} {r.text[:200]}")
            elif problem := refusal_problem(http.request(method, **request)):
                wrong.append(f"{method} {str(request)[:200]}: {problem}")
            swept[(method, path)] = swept.get((method, path), 0) + 1
    assert not wrong, "\n".join(wrong)
    unswept = sorted(set(ops) - set(swept))
    assert not unswept, f"operations the sweep sends nothing hostile to: {unswept}"
    assert rows(app) == before
    for name in ("alice", "bob", "tom"):  # no token revoked by a refused request
        assert http.get("/api/v1/me", headers=world["auth"][name]).status_code == 200


FORMS = {
    "/register": {"name": "newbie", "password": PASSWORD, "timezone": "UTC"},
    "/add": {"name": "alice", "password": PASSWORD, "score": "300", "idempotency_key": "k" * 12},
    "/timezone": {"name": "alice", "password": PASSWORD, "timezone": "Europe/Paris"},
    "/password": {
        "name": "alice",
        "password": PASSWORD,
        "new_password": "brand-new-pass",
        "new_password_again": "brand-new-pass",
    },
}
FORM_VALUES = ["x" * 10_000, "a\x00b", "\x00", "é" * 10_000]
"""What no field of a form takes; an empty one and control characters too, but in the comment."""


def form_posts() -> Iterator[tuple[str, dict]]:
    for path, good in FORMS.items():
        for field in good:
            if field == "password" and path != "/register":
                continue  # a wrong current password counts as a failed login: tested apart
            yield path, {k: v for k, v in good.items() if k != field}
            bad_values = FORM_VALUES + (["", "\u202e\x07"] if field != "comment" else [])
            bad_values += ["-50", "1e3", "301"] if field == "score" else []
            for bad in bad_values:
                yield path, {**good, field: bad}


def test_every_form_refuses_hostile_fields_with_its_page_and_changes_nothing(world):
    """Each form's fields missing, 10,000 characters long, with a NUL or control character:
    the form comes back (4xx) with its problems, nothing stored."""
    http, app = world["http"], world["app"]
    before = rows(app)
    for path, data in form_posts():
        r = http.post(path, data=data)
        what = f"POST {path} {str(data)[:200]}"
        assert 400 <= r.status_code < 500, f"{what}: {r.status_code} {r.text[:300]}"
        assert "Traceback" not in r.text, what
        assert "<title>Error: " in r.text and 'role="alert"' in r.text, what
    for path in FORMS:
        for content, kind in [
            (b"\xff\xfe=\x00", "application/x-www-form-urlencoded"),
            (b"--x\r\n", "multipart/form-data; boundary=x"),
        ]:
            r = http.post(path, content=content, headers={"Content-Type": kind})
            assert 400 <= r.status_code < 500, f"{path} {content!r}: {r.status_code} {r.text}"
            assert "Traceback" not in r.text
    assert rows(app) == before


def test_the_same_player_registered_at_once_is_stored_once(world):
    """Six registrations of one new name at once: one 201, the others 409 naming the name."""
    http = world["http"]
    answers: list[httpx.Response] = []

    def register() -> None:
        body = {"name": "twin", "password": PASSWORD, "timezone": "UTC"}
        with httpx.Client(base_url=str(http.base_url), timeout=30) as own:
            answers.append(own.post("/api/v1/players", json=body))

    threads = [threading.Thread(target=register) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in answers)
    assert codes == [201] + [409] * 5, [r.text for r in answers]
    assert all("'twin' is already taken" in r.text for r in answers if r.status_code == 409)
    roll = [p["player"] for p in http.get("/api/v1/rollcall").json()["players"]]
    assert roll.count("twin") == 1


def test_the_same_turn_sent_twice_is_stored_once(world):
    """Sent again with its key: the stored turn (200, replayed); with another key: 409."""
    http, auth = world["http"], world["auth"]["bob"]
    body = {"player": "bob", "score": 350, "idempotency_key": "bob-key-0001"}
    first = http.post("/api/v1/turns", json=body, headers=auth)
    again = http.post("/api/v1/turns", json=body, headers=auth)
    other = http.post(
        "/api/v1/turns", json={**body, "idempotency_key": "bob-key-0002"}, headers=auth
    )
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 409)
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    assert "bob already took a turn on 2026-06-15" in other.json()["detail"]
    assert len(http.get("/api/v1/players/bob/turns").json()["turns"]) == 1
