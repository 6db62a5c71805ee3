"""Values a hostile or careless client sends the tracker that JSON or pydantic would take as
something else, over a real tracker: each is refused with a 422 naming what was expected and
what came, and nothing is stored."""

from __future__ import annotations

import html
import json

import httpx
import pytest

from service.tracker import create_app


@pytest.fixture
def admin_tracker(sqlite_url, clock, monkeypatch, serve):
    """A real tracker whose administrator 'tom' logs in with 'admin-password': (http, admin
    headers)."""
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_NAME", "tom")
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "admin-password")
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        r = http.post("/api/v1/tokens", json={"name": "tom", "password": "admin-password"})
        assert r.status_code == 201, r.text
        yield http, {"Authorization": f"Bearer {r.json()['token']}"}
    app.state.db.dispose()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_reading_with_a_number_json_cannot_hold_is_refused_not_stored_as_null(
    sqlite_tracker, join, turn, number
):
    """Python's JSON parser takes NaN, Infinity and 1e999 (inf); stored, the reading came back
    with null where the number was: a 201 for a reading other than the one sent."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    body = turn("deb", rolls=[{"values": [1, 5], "reading": {"confidence": 0.5}}])
    raw = json.dumps(body).replace('{"confidence": 0.5}', f'{{"confidence": {number}}}')
    r = http.post(
        "/api/v1/turns", content=raw, headers={**auth, "Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(
        "'rolls.0.reading': expected a reading of finite numbers (as JSON has them), got NaN or "
        "Infinity in it"
    ), r.text
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []


@pytest.mark.parametrize(
    ("fields", "where", "came"),
    [
        ({"score": True}, "score", "true"),
        ({"rolls": [{"values": [True, True, 5]}]}, "rolls.0.values.0", "true"),
        ({"rolls": [{"values": [4, False]}]}, "rolls.0.values.1", "false"),
        ({"age_s": True}, "age_s", "true"),
    ],
)
def test_a_json_boolean_for_a_number_is_refused_not_taken_as_1_or_0(
    sqlite_tracker, join, turn, fields, where, came
):
    """pydantic takes true as 1 and false as 0: [true, true, 5] was stored as a roll of 1, 1, 5
    and a score of true answered 'a multiple of 50, got 1'."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    r = http.post("/api/v1/turns", json={**turn("deb"), **fields}, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(
        f"'{where}': expected a number, got {came} (a JSON boolean)"
    ), r.text
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []


def test_a_correction_to_a_score_of_true_is_refused_and_the_score_kept(admin_tracker, join, turn):
    http, admin = admin_tracker
    auth = join(http, "deb")
    turn_id = http.post("/api/v1/turns", json=turn("deb", 300), headers=auth).json()["id"]
    r = http.patch(f"/api/v1/turns/{turn_id}", json={"score": True, "reason": "x"}, headers=admin)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("'score': expected a number, got true"), r.text
    kept = http.get(f"/api/v1/turns/{turn_id}").json()
    assert (kept["score"], kept["corrections"]) == (300, [])


def test_numbers_and_a_null_age_are_still_taken(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    body = turn("deb", 300, rolls=[{"values": [6, 1]}], age_s=None)
    r = http.post("/api/v1/turns", json=body, headers=auth)
    assert r.status_code == 201, r.text
    assert (r.json()["score"], r.json()["rolls"][0]["values"]) == (300, [6, 1])


NOT_IANA = (
    "expected an IANA time zone name such as 'Europe/Paris' or 'America/Chicago', got "
    "'localtime' (the server's own zone, not one of IANA's)"
)


def test_localtime_is_refused_as_a_new_players_zone(sqlite_tracker):
    """Debian's tzdata lists 'localtime' (a link to /etc/localtime) among the zones: a player
    registered in it had their days follow the server's setting."""
    http, _ = sqlite_tracker
    body = {"name": "deb", "password": "hunter2hunter2", "timezone": "localtime"}
    r = http.post("/api/v1/players", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == f"'timezone': {NOT_IANA}"
    assert http.get("/api/v1/players/deb/turns").status_code == 404
    r = http.post("/register", data=body)
    assert r.status_code == 422, r.text
    assert html.escape(NOT_IANA) in r.text and "<title>Error: Register" in r.text
    assert http.get("/api/v1/players/deb/turns").status_code == 404


def test_localtime_is_refused_as_a_players_next_zone(sqlite_tracker, join):
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    r = http.put("/api/v1/me/timezone", json={"timezone": "localtime"}, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == f"'timezone': {NOT_IANA}"
    r = http.post(
        "/timezone", data={"name": "deb", "password": "hunter2hunter2", "timezone": "localtime"}
    )
    assert r.status_code == 422, r.text
    assert html.escape(NOT_IANA) in r.text
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"]) == ("UTC", None)


def test_the_store_itself_refuses_localtime_as_a_next_zone(tracker_app, seed_players):
    """The store's own check, for callers other than the API and the forms (whose schemas
    check first): a zone change to 'localtime' is refused before anything changes."""
    from service.tracker import rules, store

    seed_players(tracker_app, ["deb"])
    with tracker_app.state.sessionmaker() as session:
        player = store.get_player(session, "deb")
        with pytest.raises(rules.InvalidTimezone, match="the server's own zone"):
            store.change_timezone(session, player, "localtime", tracker_app.state.clock())
        session.commit()
    with tracker_app.state.sessionmaker() as session:
        player = store.get_player(session, "deb")
        assert (player.timezone, player.next_timezone) == ("UTC", None)


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (
            '{"player": "deb", "score": 300, "comment": "café"}'.encode("latin-1"),
            "expected a JSON body of UTF-8 text, got bytes that are not text (utf-8: invalid "
            "continuation byte at byte 47)",
        ),
        (
            b"\xff\xfe\x00",
            "expected a JSON body of UTF-8 text, got bytes that are not text (utf-16-le: "
            "truncated data at byte 2)",
        ),
        (
            b'{"player": "deb", "score": 1' + b"0" * 5000 + b"}",
            "expected a JSON body whose numbers have at most 4300 digits, got a longer one",
        ),
    ],
)
def test_a_body_the_json_parser_cannot_read_is_refused_saying_why(
    sqlite_tracker, join, content, detail
):
    """FastAPI answered these 400 'There was an error parsing the body', naming neither what
    was expected nor what came."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    headers = {**auth, "Content-Type": "application/json; charset=latin-1"}
    r = http.post("/api/v1/turns", content=content, headers=headers)
    assert r.status_code == 400, r.text
    assert r.json() == {"detail": detail}
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []


LONG = "x" * 10_000
CLIPPED = f"'{'x' * 80}...' (10000 characters)"


def test_a_value_sent_10000_characters_long_is_not_sent_back_whole(sqlite_tracker, join, turn):
    """A name, a zone or a turn's player 10,000 characters long came back whole in the
    refusal's sentence (10 kB of detail; a form's page held it three times)."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    r = http.post(
        "/api/v1/players", json={"name": LONG, "password": "hunter2hunter2", "timezone": "UTC"}
    )
    assert r.status_code == 422, r.text[:300]
    assert r.json()["detail"].endswith(f"starting with a letter or digit, got {CLIPPED}")
    body = {"name": "eve", "password": "hunter2hunter2", "timezone": "Europe/" + LONG}
    r = http.post("/api/v1/players", json=body)
    assert r.status_code == 422, r.text[:300]
    assert "'timezone': String should have at most 64 characters" in r.json()["detail"]
    assert len(r.text) < 400, r.text[:300]
    r = http.get(f"/api/v1/players/{LONG}/turns")
    assert r.status_code == 404, r.text[:300]
    assert r.json() == {"detail": f"no player named {CLIPPED}"}
    r = http.post("/api/v1/turns", json=turn(LONG), headers=auth)
    assert r.status_code == 403, r.text[:300]
    assert r.json()["detail"].endswith(f"the turn is for {CLIPPED}")
    r = http.post("/register", data={"name": LONG, "password": "hunter2hunter2", "timezone": "UTC"})
    assert r.status_code == 422, r.text[:300]
    assert r.text.count(LONG) == 1  # the field keeps what was typed; its problem quotes less
    assert html.escape(CLIPPED) in r.text
    assert [p["player"] for p in http.get("/api/v1/rollcall").json()["players"]] == ["deb"]


@pytest.mark.parametrize("reading", ['{"a": "x\\ud800"}', '{"a": [{"b": "\\udfff"}]}'])
def test_a_reading_with_half_a_surrogate_pair_is_refused_saying_so(
    sqlite_tracker, join, turn, reading
):
    """JSON's \\ud800 alone is no character: the 422 said "'utf-8' codec can't encode character
    '\\ud800' in position 6: surrogates not allowed", a position in a text the client never
    saw."""
    http, _ = sqlite_tracker
    auth = join(http, "deb")
    body = turn("deb", rolls=[{"values": [1, 5], "reading": {"confidence": 0.5}}])
    raw = json.dumps(body).replace('{"confidence": 0.5}', reading)
    r = http.post(
        "/api/v1/turns", content=raw, headers={**auth, "Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(
        "'rolls.0.reading': expected a reading of text JSON can hold, got half of a UTF-16 "
        "surrogate pair ("
    ), r.text
    assert "codec" not in r.text
    assert http.get("/api/v1/players/deb/turns").json()["turns"] == []


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_json_body_sent_as_another_type_is_named_by_its_type_not_echoed(sqlite_tracker, kind):
    """FastAPI passes such a body on as its bytes: the 422 said 'Input should be a valid
    dictionary ... (got b'{"name": "deb", "password": "hunter2hunter2"}')', the password
    echoed, and the type that was wrong not named."""
    http, _ = sqlite_tracker
    body = json.dumps({"name": "deb", "password": "hunter2hunter2", "timezone": "UTC"})
    headers = {"Content-Type": kind} if kind else {}
    for path in ["/api/v1/players", "/api/v1/tokens"]:
        r = http.post(path, content=body.encode(), headers=headers)
        assert r.status_code == 415, r.text
        came = f"content-type {kind!r}" if kind else "no content-type"
        assert r.json() == {
            "detail": f"expected a JSON body (content-type 'application/json'), got {came}"
        }
        assert "hunter2" not in r.text
    assert http.get("/api/v1/players/deb/turns").status_code == 404


def test_localtime_is_refused_as_the_viewers_zone(sqlite_tracker):
    """``tz=localtime`` on the leaderboard and the rounds was taken: the round under way was
    the year of the server's own day, whatever the viewer's."""
    http, _ = sqlite_tracker
    for route in ("/api/v1/leaderboard", "/api/v1/rounds"):
        r = http.get(route, params={"tz": "localtime"})
        assert r.status_code == 422, r.text
        assert NOT_IANA in r.json()["detail"] and "'tz'" in r.json()["detail"], r.text
        assert http.get(route, params={"tz": "Europe/Paris"}).status_code == 200
