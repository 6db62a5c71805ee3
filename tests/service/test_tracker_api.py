"""The tracker's HTTP API over a real socket (uvicorn on a free port): accounts, security,
validation, evidence, pages, admin corrections; on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from fastapi import FastAPI

from service.tracker import create_app

JPEG = b"\xff\xd8\xff\xe0" + b"\x00\x10JFIF" + bytes(range(256)) + b"\xff\xd9"


def test_register_login_submit_and_read_back(tracker, join, turn):
    http, clock = tracker
    clock.set("2026-02-03T15:00:00+00:00")  # 09:00 in Chicago
    auth = join(http, "heather", "America/Chicago")
    body = turn(
        "heather",
        600,
        comment="kept the 1, then the 4s",
        rolls=[
            {
                "values": [1, 2, 2, 3, 5, 6],
                "reading": {"width": 640, "dice": []},
                "photo_jpeg_b64": base64.b64encode(JPEG).decode(),
            },
            {"values": [1, 4, 4, 4, 6], "reading": None},
        ],
    )
    r = http.post("/api/v1/turns", json=body, headers=auth)
    assert r.status_code == 201, r.text
    stored = r.json()
    assert (stored["player"], stored["score"], stored["day"], stored["round"]) == (
        "heather",
        600,
        "2026-02-03",
        2026,
    )
    assert stored["local_time"].startswith("2026-02-03T09:00:00")
    assert stored["replayed"] is False
    assert [r["values"] for r in stored["rolls"]] == [[1, 2, 2, 3, 5, 6], [1, 4, 4, 4, 6]]
    assert stored["rolls"][1]["photo_url"] is None
    photo = http.get(stored["rolls"][0]["photo_url"])
    assert photo.headers["content-type"] == "image/jpeg" and photo.content == JPEG
    again = http.get(f"/api/v1/turns/{stored['id']}").json()
    assert again["rolls"][0]["reading"] == {"width": 640, "dice": []}

    board = http.get("/api/v1/leaderboard", params={"round": 2026}).json()
    assert board["standings"] == [
        {
            "rank": 1,
            "player": "heather",
            "total": 600,
            "turns": 1,
            "best": 600,
            "last_day": "2026-02-03",
        }
    ]
    hist = http.get("/api/v1/players/HEATHER/turns").json()
    assert [t["score"] for t in hist["turns"]] == [600]
    call = http.get("/api/v1/rollcall").json()["players"]
    assert call[0]["player"] == "heather" and call[0]["rolled_today"] is True


def test_a_player_can_only_submit_their_own_turns(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    a = join(http, "stefan")
    join(http, "jacob")
    r = http.post("/api/v1/turns", json=turn("jacob"), headers=a)
    assert r.status_code == 403
    assert "this token belongs to 'stefan', the turn is for 'jacob'" in r.json()["detail"]
    r = http.post("/api/v1/turns", json=turn("stefan"))
    assert r.status_code == 401 and "Bearer" in r.json()["detail"]
    r = http.post("/api/v1/turns", json=turn("stefan"), headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]
    r = http.post("/api/v1/tokens", json={"name": "stefan", "password": "wrong-password"})
    assert r.status_code == 401 and r.json() == {"detail": "wrong player name or password"}


def test_passwords_are_stored_with_argon2(sqlite_tracker, sqlite_url, join):
    import sqlalchemy as sa

    http, _ = sqlite_tracker
    join(http, "jeremy", password="correct horse battery")
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT password_hash FROM players")).scalar_one()
        tokens = conn.execute(sa.text("SELECT token_hash FROM tokens")).scalars().all()
    engine.dispose()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    assert all(len(t) == 64 for t in tokens)


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"name": "ok", "password": "short", "timezone": "UTC"}, 422, "password"),
        (
            {"name": "ok", "password": "long enough", "timezone": "Moon/Base"},
            422,
            "expected an IANA time zone name",
        ),
        (
            {"name": "<script>", "password": "long enough", "timezone": "UTC"},
            422,
            "expected a name of 1 to 40",
        ),
        ({"name": "ok", "password": "long enough"}, 422, "missing field 'timezone'"),
        (
            {"name": "ok", "password": "long enough", "timezone": "UTC", "admin": True},
            422,
            "expected only the keys 'name', 'password', 'timezone', got the unknown key 'admin'",
        ),
    ],
)
def test_registration_validation_errors_are_clear(sqlite_tracker, body, status, needle):
    http, _ = sqlite_tracker
    r = http.post("/api/v1/players", json=body)
    assert r.status_code == status
    assert isinstance(r.json()["detail"], str) and needle in r.json()["detail"]
    assert "'short'" not in r.json()["detail"]  # a password is never echoed back
    assert http.get("/api/v1/rollcall").json()["players"] == []


def test_malformed_json_is_named_as_such(sqlite_tracker):
    http, _ = sqlite_tracker
    r = http.post(
        "/api/v1/players", content=b'{"name":', headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json() == {"detail": "the request body is not valid JSON"}


def test_pages_answer_a_bad_address_with_a_page_and_the_api_with_json(sqlite_tracker):
    http, _ = sqlite_tracker
    for path in ("/turns/abc", "/rounds/1800", "/players/x?round=abc"):
        r = http.get(path)
        assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), path
        assert "<h1>Cannot do that</h1>" in r.text
    r = http.get("/api/v1/turns/abc")
    assert r.status_code == 422 and "'turn_id' (in the path)" in r.json()["detail"]


def test_name_taken_regardless_of_case(sqlite_tracker, join):
    http, _ = sqlite_tracker
    join(http, "Heather")
    r = http.post(
        "/api/v1/players", json={"name": "heather", "password": "x" * 10, "timezone": "UTC"}
    )
    assert r.status_code == 409 and r.json() == {"detail": "the name 'heather' is already taken"}


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        ({"score": 75}, "expected a Morning Roll score, a multiple of 50, got 75"),
        ({"score": -50}, "'score': Input should be greater than or equal to 0 (got -50)"),
        ({"game": "greed"}, "'game': Input should be 'morning-roll'"),
        ({"rolls": [{"values": [7]}]}, "rolls.0.values.0"),
        (
            {"rolls": [{"values": [1], "photo_jpeg_b64": base64.b64encode(b"GIF89a").decode()}]},
            "expected a JPEG photo",
        ),
        ({"rolls": [{"values": [1], "photo_jpeg_b64": "***"}]}, "not base64"),
        ({"idempotency_key": "x"}, "idempotency_key"),
        ({"comment": "x" * 501}, "comment"),
    ],
)
def test_turn_validation_errors_are_clear_and_store_nothing(
    sqlite_tracker, patch, needle, join, turn
):
    http, _ = sqlite_tracker
    auth = join(http, "jeff")
    r = http.post("/api/v1/turns", json={**turn("jeff"), **patch}, headers=auth)
    assert r.status_code == 422, r.text
    assert needle in r.json()["detail"]
    assert http.get("/api/v1/players/jeff/turns").json()["turns"] == []


def test_admin_corrects_a_score_with_an_audit_record(tracker, monkeypatch, join, turn):
    http, clock = tracker
    auth = join(http, "mike")
    stored = http.post("/api/v1/turns", json=turn("mike", 5000), headers=auth).json()
    r = http.patch(
        f"/api/v1/turns/{stored['id']}", json={"score": 500, "reason": "typo"}, headers=auth
    )
    assert r.status_code == 403 and "only an administrator" in r.json()["detail"]
    assert http.get(f"/api/v1/turns/{stored['id']}").json()["score"] == 5000


def test_admin_from_environment_can_correct(sqlite_url, clock, monkeypatch, serve, join, turn):
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_NAME", "tom")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "admin-password")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        auth = join(http, "mike")
        stored = http.post("/api/v1/turns", json=turn("mike", 5000), headers=auth).json()
        token = http.post("/api/v1/tokens", json={"name": "tom", "password": "admin-password"})
        admin = {"Authorization": f"Bearer {token.json()['token']}"}
        assert token.json()["player"]["is_admin"] is True
        r = http.patch(
            f"/api/v1/turns/{stored['id']}",
            json={"score": 500, "reason": "typed an extra zero"},
            headers=admin,
        )
        assert r.status_code == 200, r.text
        assert r.json()["score"] == 500
        assert [
            (c["admin"], c["old_score"], c["new_score"], c["reason"])
            for c in r.json()["corrections"]
        ] == [("tom", 5000, 500, "typed an extra zero")]
        assert http.get("/api/v1/leaderboard").json()["standings"][0]["total"] == 500
        page = http.get(f"/turns/{stored['id']}").text
        assert "Corrected by tom from 5000 to 500: typed an extra zero" in page
        r = http.patch("/api/v1/turns/999", json={"score": 50, "reason": "x"}, headers=admin)
        assert r.status_code == 404 and r.json() == {"detail": "no turn with id 999"}
    app.state.db.dispose()


def test_pages_link_relative_to_the_mount_point(sqlite_url, clock, serve, join, turn):
    tracker_app = create_app(sqlite_url, clock=clock)
    outer = FastAPI()
    outer.mount("/tracker", tracker_app)
    server = serve(outer, root_path="/tracker")
    with httpx.Client(base_url=server.url, timeout=30) as http:
        auth = join(http, "heather")
        body = turn(
            "heather",
            600,
            comment="<b>bold</b> & proud",
            rolls=[
                {
                    "values": [1, 2, 2, 3, 5, 6],
                    "reading": {"dice": []},
                    "photo_jpeg_b64": base64.b64encode(JPEG).decode(),
                }
            ],
        )
        stored = http.post("/api/v1/turns", json=body, headers=auth).json()
        assert stored["rolls"][0]["photo_url"].startswith("/tracker/api/v1/")
        board = http.get("/")
        assert board.headers["content-type"].startswith("text/html")
        assert f'href="/tracker/turns/{stored["id"]}"' in board.text
        assert 'href="/tracker/players/heather"' in board.text
        assert "http://" not in board.text and "https://" not in board.text  # no CDN
        evidence = http.get(f"/turns/{stored['id']}").text
        assert f'src="/tracker/api/v1/turns/{stored["id"]}/rolls/0/photo.jpg"' in evidence
        assert "&lt;b&gt;bold&lt;/b&gt; &amp; proud" in evidence and "<b>bold" not in evidence
        server_root = f"http://127.0.0.1:{server.port}"
        img = httpx.get(server_root + stored["rolls"][0]["photo_url"], timeout=30)
        assert img.content == JPEG
        assert "heather" in http.get("/players/heather").text
        assert "heather" in http.get("/rollcall").text
        missing = http.get("/players/nobody")
        assert missing.status_code == 404 and "no player named" in missing.text
    tracker_app.state.db.dispose()


def test_web_forms_register_and_add_a_roll_once(sqlite_tracker):
    http, clock = sqlite_tracker
    clock.set("2026-08-08T10:00:00+00:00")
    page = http.get("/register")
    assert page.status_code == 200 and 'action="/register"' in page.text
    bad = http.post("/register", data={"name": "kenny", "password": "pw", "timezone": "UTC"})
    assert bad.status_code == 422 and "password" in bad.text
    ok = http.post(  # spaces around the password are dropped here as in the API...
        "/register", data={"name": "kenny", "password": " long-password ", "timezone": "UTC"}
    )
    assert ok.status_code == 201 and "Welcome, kenny!" in ok.text
    form = http.get("/add").text
    key = form.split('name="idempotency_key" value="')[1].split('"')[0]
    data = {
        "name": "kenny",
        "password": " long-password ",  # ...and when adding a roll (it was refused with 401)
        "score": "650",
        "comment": "by hand",
        "idempotency_key": key,
    }
    wrong = http.post("/add", data={**data, "password": "not-it"})
    assert wrong.status_code == 401 and "wrong player name or password" in wrong.text
    odd = http.post("/add", data={**data, "score": "75"})
    assert odd.status_code == 422 and "multiple of 50" in odd.text
    first = http.post("/add", data=data)
    assert first.status_code == 201 and "scored <strong>650</strong>" in first.text
    twice = http.post("/add", data=data)  # the same form sent again: still one turn
    assert twice.status_code == 201
    other = http.post("/add", data={**data, "idempotency_key": str(uuid.uuid4())})
    assert other.status_code == 409 and "already took a turn on 2026-08-08" in other.text
    turns = http.get("/api/v1/players/kenny/turns").json()["turns"]
    assert [(t["score"], t["comment"]) for t in turns] == [(650, "by hand")]


def test_oversized_request_is_refused_with_413(sqlite_url, clock, serve, monkeypatch, join, turn):
    monkeypatch.setenv("DICECAM_MAX_UPLOAD_MB", "0.01")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        auth = join(http, "heather")
        big = turn("heather", rolls=[{"values": [1], "reading": {"pad": "x" * 20_000}}])
        r = http.post("/api/v1/turns", json=big, headers=auth)
        assert (
            r.status_code == 413
            and "expected a request of at most 10485 bytes" in r.json()["detail"]
        )
        body = json.dumps(big).encode()  # streamed in chunks: no Content-Length to check
        chunks = (body[i : i + 4096] for i in range(0, len(body), 4096))
        r = http.post(
            "/api/v1/turns", content=chunks, headers={**auth, "content-type": "application/json"}
        )
        assert r.status_code == 413 and "at most 10485 bytes" in r.json()["detail"]
        assert http.post("/api/v1/turns", json=turn("heather"), headers=auth).status_code == 201
    app.state.db.dispose()


def test_default_database_is_a_sqlite_file_in_the_data_dir(tmp_path, monkeypatch, clock):
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "deep" / "data"))
    monkeypatch.delenv("DICECAM_TRACKER_DATABASE_URL", raising=False)
    app = create_app(clock=clock)
    assert (tmp_path / "deep" / "data" / "tracker.sqlite3").is_file()
    assert app.state.db.sqlite
    app.state.db.dispose()


def test_logout_revokes_the_token(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "stefan")
    assert http.get("/api/v1/me", headers=auth).json()["name"] == "stefan"
    assert http.delete("/api/v1/tokens/current", headers=auth).status_code == 204
    r = http.post("/api/v1/turns", json=turn("stefan"), headers=auth)
    assert r.status_code == 401 and "unknown or revoked token" in r.json()["detail"]
    assert http.delete("/api/v1/tokens/current", headers=auth).status_code == 401
