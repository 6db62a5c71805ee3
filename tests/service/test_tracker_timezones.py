"""Morning Roll's days and hours for players far from the tracker's UTC clock, through a real
tracker over HTTP: daylight-saving days and half- and quarter-hour zones, a turn that names its
own day, the round under way at New Year for the viewer's zone (API and pages), a history across
New Year, and an add-on whose clock is off, or whose outbox held a turn for days.

Every expected UTC instant below was worked out by hand from the zone's offset that day (written
beside it), not with the code under test. test_tracker_days.py and test_tracker_dayof.py hold
the simpler cases (one turn a day, far zones at midnight, a turn delivered a day late)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
import pytest

from service.tracker import create_app
from service.tracker_client import TrackerClient, TurnSubmission


@pytest.fixture
def site(sqlite_url, clock, serve, seed_players):
    """``(http, clock, seed)``: a real tracker on SQLite at ``clock``; ``seed(name, tz)`` makes
    a player straight in its database and returns their auth headers."""
    app = create_app(sqlite_url, clock=clock)
    server = serve(app)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http, clock, lambda name, tz: seed_players(app, [name], tz=tz)[name]
    app.state.db.dispose()


# zone, the local day, and the UTC instants of 07:59, 08:00, 19:59 and 20:00 local that day
HOURS = [
    # the US springs forward at 2am: EST (UTC-5) before, EDT (UTC-4) all of the open hours
    ("America/New_York", "2026-03-08", "11:59", "12:00", "23:59", "+1 00:00", "-04:00"),
    # the US falls back at 2am: EST (UTC-5) all of the open hours
    ("America/New_York", "2026-11-01", "12:59", "13:00", "+1 00:59", "+1 01:00", "-05:00"),
    # BST (UTC+1) from 1am UTC
    ("Europe/London", "2026-03-29", "06:59", "07:00", "18:59", "19:00", "+01:00"),
    # GMT (UTC+0) from 1am UTC
    ("Europe/London", "2026-10-25", "07:59", "08:00", "19:59", "20:00", "+00:00"),
    # Sydney falls back at 3am: AEST (UTC+10), so 8am is 22:00 UTC the day before
    ("Australia/Sydney", "2026-04-05", "-1 21:59", "-1 22:00", "09:59", "10:00", "+10:00"),
    # Sydney springs forward at 2am: AEDT (UTC+11)
    ("Australia/Sydney", "2026-10-04", "-1 20:59", "-1 21:00", "08:59", "09:00", "+11:00"),
    ("Asia/Kolkata", "2026-03-01", "02:29", "02:30", "14:29", "14:30", "+05:30"),  # UTC+5:30
    ("Asia/Kathmandu", "2026-03-01", "02:14", "02:15", "14:14", "14:15", "+05:45"),  # UTC+5:45
    # UTC-8 (PST): 7:30 local on March 1 is 15:30 UTC, closed; 19:59 local is March 2 in UTC
    ("America/Los_Angeles", "2026-03-01", "15:59", "16:00", "+1 03:59", "+1 04:00", "-08:00"),
    # UTC+13: 8am on March 2 is still March 1 in UTC
    ("Pacific/Tongatapu", "2026-03-02", "-1 18:59", "-1 19:00", "06:59", "07:00", "+13:00"),
]


def at(day: str, when: str) -> str:
    """The UTC instant ``when`` ("HH:MM", "+1 HH:MM" the day after, "-1 HH:MM" the day before)
    relative to ``day``, as ISO text."""
    shift, _, hhmm = when.rpartition(" ")
    base = datetime.fromisoformat(f"{day}T{hhmm}:00+00:00")
    return (base + timedelta(days=int(shift or 0))).isoformat()


@pytest.mark.parametrize(("zone", "day", "t759", "t800", "t1959", "t2000", "offset"), HOURS)
def test_open_hours_on_daylight_saving_days_and_odd_offsets(
    site, turn, zone, day, t759, t800, t1959, t2000, offset
):
    http, clock, seed = site
    clock.set(at(day, t800))
    auth = seed("tom", zone)
    clock.set(at(day, t759))
    r = http.post("/api/v1/turns", json=turn("tom", 100), headers=auth)
    assert r.status_code == 403 and f"it is 07:59 on {day} in {zone}" in r.json()["detail"]
    clock.set(at(day, t800))
    r = http.post("/api/v1/turns", json=turn("tom", 200), headers=auth)
    assert r.status_code == 201, r.text
    assert (r.json()["day"], r.json()["local_time"]) == (day, f"{day}T08:00:00{offset}")
    clock.set(at(day, t1959))
    r = http.post("/api/v1/turns", json=turn("tom", 300), headers=auth)
    assert r.status_code == 409 and f"already took a turn on {day}" in r.json()["detail"]
    clock.set(at(day, t2000))
    r = http.post("/api/v1/turns", json=turn("tom", 400), headers=auth)
    assert r.status_code == 403 and f"it is 20:00 on {day} in {zone}" in r.json()["detail"]
    turns = http.get("/api/v1/players/tom/turns").json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [(day, 200)]


@pytest.mark.parametrize("field", ["day", "played_at", "timezone", "round"])
def test_a_turn_that_names_its_own_day_or_time_is_refused_by_name(site, turn, field):
    http, clock, seed = site
    clock.set("2026-03-01T19:00:00+00:00")  # Tongatapu: March 2, 08:00
    auth = seed("kenny", "Pacific/Tongatapu")
    value = {"day": "2026-03-03", "played_at": "2026-03-03T09:00:00+13:00", "round": 2027}
    r = http.post(
        "/api/v1/turns", json=turn("kenny", 300, **{field: value.get(field, "UTC")}), headers=auth
    )
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert f"expected no {field!r}: the tracker sets a turn's day from its own clock" in detail
    assert "'age_s'" in detail and f"got {field}=" in detail
    assert http.get("/api/v1/players/kenny/turns").json()["turns"] == []
    r = http.post("/api/v1/turns", json=turn("kenny", 300), headers=auth)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-02"


@pytest.fixture
def new_year(site, turn):
    """jeff (Kiritimati, UTC+14) has played the first turn of round 2027 while molly (UTC) and
    shea (Pago Pago, UTC-11) are still in round 2026: 2026-12-31 19:30 UTC."""
    http, clock, seed = site
    clock.set("2026-12-31T19:30:00+00:00")
    for name, zone, score in [
        ("molly", "UTC", 1000),  # Dec 31, 19:30
        ("jeff", "Pacific/Kiritimati", 300),  # Jan 1, 09:30
        ("shea", "Pacific/Pago_Pago", 50),  # Dec 31, 08:30
    ]:
        auth = seed(name, zone)
        assert http.post("/api/v1/turns", json=turn(name, score), headers=auth).status_code == 201
    return http, clock


def board(http: httpx.Client, **params) -> tuple[int, list[tuple[str, int]]]:
    body = http.get("/api/v1/leaderboard", params=params).json()
    return body["round"], [(s["player"], s["total"]) for s in body["standings"]]


def test_the_round_under_way_is_the_year_of_the_viewers_day(new_year):
    http, clock = new_year
    assert board(http) == (2026, [("molly", 1000), ("shea", 50)])
    assert board(http, tz="Pacific/Kiritimati") == (2027, [("jeff", 300)])
    assert board(http, tz="Pacific/Kiritimati", round=2026)[0] == 2026  # round= wins
    rounds = http.get("/api/v1/rounds", params={"tz": "Pacific/Kiritimati"}).json()
    assert rounds == {"current": 2027, "rounds": [2027, 2026]}
    clock.set("2027-01-01T06:00:00+00:00")  # UTC is in 2027; Pago Pago: Dec 31, 19:00
    assert board(http)[0] == 2027
    assert board(http, tz="Pacific/Pago_Pago") == (2026, [("molly", 1000), ("shea", 50)])
    assert http.get("/api/v1/rounds", params={"tz": "Pacific/Pago_Pago"}).json()["current"] == 2026
    r = http.get("/api/v1/leaderboard", params={"tz": "UTC+14"})
    assert r.status_code == 422
    assert (
        "expected an IANA time zone name" in r.json()["detail"] and "'UTC+14'" in r.json()["detail"]
    )
    assert http.get("/api/v1/rounds", params={"tz": "Mars/Olympus"}).status_code == 422


def test_the_tracker_client_asks_for_the_viewers_round(new_year):
    http, _ = new_year
    with TrackerClient(str(http.base_url)) as client:
        assert client.leaderboard(tz="Pacific/Kiritimati")["round"] == 2027
        assert client.leaderboard()["round"] == 2026


@pytest.mark.browser
@pytest.mark.parametrize(
    ("zone", "utc", "path", "round_", "players"),
    [
        ("Pacific/Kiritimati", "2026-12-31T19:30:00+00:00", "/rounds/2027", 2027, ["jeff"]),
        ("UTC", "2026-12-31T19:30:00+00:00", "/", 2026, ["molly", "shea"]),
        ("Pacific/Pago_Pago", "2027-01-01T06:00:00+00:00", "/rounds/2026", 2026, ["molly", "shea"]),
    ],
)
def test_the_leaderboard_page_shows_the_round_of_the_browsers_day(
    chromium, new_year, zone, utc, path, round_, players
):
    http, clock = new_year
    clock.set(utc)
    context = chromium.new_context(timezone_id=zone)
    page = context.new_page()
    page.goto(f"{http.base_url}/")
    page.wait_for_url(f"{http.base_url}{path}")
    assert page.locator("h1").inner_text() == f"Round {round_} leaderboard"
    rows = page.locator("tbody th[scope=row]").all_inner_texts()
    assert rows == players
    context.close()


def test_a_history_across_new_year_far_east_groups_by_the_players_day(site, turn):
    http, clock, seed = site
    clock.set("2026-12-30T19:00:00+00:00")  # Kiritimati: Dec 31, 09:00
    auth = seed("jeff", "Pacific/Kiritimati")
    for utc, score in [
        ("2026-12-30T19:00", 100),
        ("2026-12-31T19:00", 200),
        ("2027-01-01T19:00", 300),
    ]:
        clock.set(f"{utc}:00+00:00")
        assert http.post("/api/v1/turns", json=turn("jeff", score), headers=auth).status_code == 201
    pages, params = [], {"limit": 1}
    while params:
        body = http.get("/api/v1/players/jeff/turns", params=params).json()
        pages.append([(t["day"], t["round"], t["score"]) for t in body["turns"]])
        params = {"limit": 1, "before": body["next_before"]} if body["next_before"] else {}
    assert pages == [
        [("2027-01-02", 2027, 300)],
        [("2027-01-01", 2027, 200)],
        [("2026-12-31", 2026, 100)],
    ]
    only = http.get("/api/v1/players/jeff/turns", params={"round": 2026}).json()["turns"]
    assert [t["day"] for t in only] == ["2026-12-31"]
    html = http.get("/players/jeff", params={"round": 2027}).text
    assert "2027-01-01" in html and "2027-01-02" in html and "2026-12-31" not in html
    assert board(http, round=2026) == (2026, [("jeff", 100)])
    assert board(http, round=2027) == (2027, [("jeff", 500)])


# -- the add-on's clock and its outbox ---------------------------------------------------------


def skewed(tracker: Callable[[], datetime], minutes: int) -> Callable[[], datetime]:
    """The add-on's clock: the tracker's, ``minutes`` ahead (or behind)."""
    return lambda: tracker() + timedelta(minutes=minutes)


@pytest.mark.parametrize("minutes", [5, -5])
def test_an_add_on_clock_off_by_five_minutes_counts_the_day_played(
    sqlite_url, clock, serve, seed_players, tmp_path, unused_port, minutes
):
    clock.set("2026-03-01T03:58:00+00:00")  # Los Angeles (PST): Feb 28, 19:58
    app = create_app(sqlite_url, clock=clock)
    token = seed_players(app, ["heather"], tz="America/Los_Angeles")["heather"]["Authorization"]
    url = f"http://127.0.0.1:{unused_port}"
    client = TrackerClient(
        url, token=token[7:], outbox_dir=tmp_path, retries=0, clock=skewed(clock, minutes)
    )
    late = client.queue(TurnSubmission(player="heather", score=1500))  # the tracker is down
    clock.set("2026-03-01T03:59:30+00:00")  # back at 19:59:30: the same day
    serve(app, port=unused_port)
    report = client.deliver_pending(force=True)
    assert report.delivered[late.key]["day"] == "2026-02-28"

    clock.set("2026-03-01T16:10:00+00:00")  # March 1, 08:10
    played = client.queue(TurnSubmission(player="heather", score=600))  # not sent for 3 days
    clock.set("2026-03-04T16:05:00+00:00")  # March 4, 08:05
    report = client.deliver_pending(force=True)
    assert (
        "played on 2026-03-01 and it is 2026-03-04 now in America/Los_Angeles"
        in report.rejected[played.key]
    )
    today = client.submit_turn(TurnSubmission(player="heather", score=50))
    assert (today["day"], today["score"]) == ("2026-03-04", 50)
    with httpx.Client(base_url=url, timeout=30) as http:
        turns = http.get("/api/v1/players/heather/turns").json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [("2026-03-04", 50), ("2026-02-28", 1500)]
    client.close()
    app.state.db.dispose()


@pytest.mark.parametrize(
    ("zone", "queued", "delivered", "played", "today"),
    [
        # New York springs forward: queued 19:50 EST (UTC-5), sent 08:05 EDT (UTC-4)
        ("America/New_York", "2026-03-08T00:50", "2026-03-08T12:05", "2026-03-07", "2026-03-08"),
        # New York falls back: queued 19:50 EDT (UTC-4), sent 08:05 EST (UTC-5)
        ("America/New_York", "2026-10-31T23:50", "2026-11-01T13:05", "2026-10-31", "2026-11-01"),
        # Sydney springs forward: queued 19:50 AEST (UTC+10), sent 08:05 AEDT (UTC+11)
        ("Australia/Sydney", "2026-10-03T09:50", "2026-10-03T21:05", "2026-10-03", "2026-10-04"),
        # London springs forward: queued 19:50 GMT, sent 08:05 BST (UTC+1)
        ("Europe/London", "2026-03-28T19:50", "2026-03-29T07:05", "2026-03-28", "2026-03-29"),
    ],
)
def test_an_outbox_turn_queued_before_the_clocks_change_counts_for_its_own_day(
    sqlite_url,
    clock,
    serve,
    seed_players,
    tmp_path,
    unused_port,
    zone,
    queued,
    delivered,
    played,
    today,
):
    clock.set(f"{queued}:00+00:00")
    app = create_app(sqlite_url, clock=clock)
    token = seed_players(app, ["mike"], tz=zone)["mike"]["Authorization"][7:]
    url = f"http://127.0.0.1:{unused_port}"
    client = TrackerClient(url, token=token, outbox_dir=tmp_path, retries=0, clock=clock)
    evening = client.queue(TurnSubmission(player="mike", score=2500))  # the tracker is down
    clock.set(f"{delivered}:00+00:00")
    serve(app, port=unused_port)
    report = client.deliver_pending(force=True)
    assert f"played on {played} and it is {today} now in {zone}" in report.rejected[evening.key]
    morning = client.submit_turn(TurnSubmission(player="mike", score=350))
    assert (morning["day"], morning["local_time"][11:16]) == (today, "08:05")
    client.close()
    app.state.db.dispose()
