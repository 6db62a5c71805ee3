"""A player's time-zone change over a real tracker (``PUT /api/v1/me/timezone``): a bad or
unchanged zone refused naming it, a new zone counting from the next day with no second turn, a
change not yet in force kept, replaced or called off, the form in a real chromium, and a
database of revision 0003 upgraded and taken back down."""

from __future__ import annotations

import httpx
import pytest

from service.tracker import create_app


def change_zone(http: httpx.Client, auth: dict, zone: str) -> httpx.Response:
    return http.put("/api/v1/me/timezone", json={"timezone": zone}, headers=auth)


def test_a_bad_or_unchanged_zone_is_refused_naming_it_and_changes_nothing(sqlite_tracker, join):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    auth = join(http, "kenny", "America/New_York")
    r = change_zone(http, auth, "Mars/Olympus")
    assert r.status_code == 422 and "'Mars/Olympus'" in r.json()["detail"], r.text
    assert "expected an IANA time zone name" in r.json()["detail"]
    r = change_zone(http, auth, "America/New_York")
    assert r.status_code == 409, r.text
    assert r.json()["detail"] == (
        "expected another time zone than 'America/New_York': kenny's turns already count in it"
    )
    assert change_zone(http, {}, "Europe/Paris").status_code == 401
    assert http.put("/api/v1/me/timezone", json={}, headers=auth).status_code == 422
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"], me["timezone_from"]) == (
        "America/New_York",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("home", "away", "asked", "expected_from", "tries"),
    [
        (  # a traveller east: New York's next day is still played, Paris's days follow it
            "America/New_York",
            "Europe/Paris",
            "2026-03-10T15:00",  # 11:00 in New York, after the day's turn
            "2026-03-11T23:00:00Z",  # midnight in Paris once New York's 10th is over
            [
                ("2026-03-10T16:00", 409, "2026-03-10"),  # 17:00 in Paris: still New York's 10th
                ("2026-03-11T13:00", 201, "2026-03-11"),  # 09:00 in New York
                ("2026-03-11T23:30", 403, None),  # 00:30 in Paris: its 12th is not open yet
                ("2026-03-12T07:30", 201, "2026-03-12"),  # 08:30 in Paris
            ],
        ),
        (  # far east, after the evening's turn: Tokyo's open afternoon gives no second turn
            "Pacific/Honolulu",
            "Asia/Tokyo",
            "2026-03-11T05:00",  # 19:00 in Honolulu on the 10th; 14:00 on the 11th in Tokyo
            "2026-03-11T15:00:00Z",  # midnight in Tokyo once Honolulu's 10th is over
            [
                ("2026-03-11T05:30", 409, "2026-03-10"),  # Honolulu's 10th, taken
                ("2026-03-11T10:00", 403, None),  # 19:00 in Tokyo, but midnight in Honolulu
                ("2026-03-11T23:00", 201, "2026-03-12"),  # 08:00 in Tokyo; the 11th is missed
            ],
        ),
        (  # far west, after the morning's turn: Honolulu's yesterday is not played late
            "Asia/Tokyo",
            "Pacific/Honolulu",
            "2026-03-09T23:30",  # 08:30 in Tokyo on the 10th; 13:30 on the 9th in Honolulu
            "2026-03-11T10:00:00Z",  # midnight in Honolulu once Tokyo's 10th is over
            [
                ("2026-03-10T00:00", 409, "2026-03-10"),  # 14:00 on the 9th in Honolulu: refused
                ("2026-03-10T23:00", 201, "2026-03-11"),  # 08:00 in Tokyo on the 11th
                ("2026-03-11T18:00", 409, "2026-03-11"),  # 08:00 in Honolulu on the 11th: taken
                ("2026-03-12T18:00", 201, "2026-03-12"),
            ],
        ),
    ],
)
def test_a_new_zone_counts_from_the_next_day_and_gives_no_second_turn(
    tracker, join, turn, home, away, asked, expected_from, tries
):
    """A player takes the day's turn, then asks for another zone: turns count in the old zone
    until the first midnight in the new one once the old zone's day is over, then in the new
    one; no day is played twice, none after a later one, and the turns taken keep their day
    (SQLite and PostgreSQL)."""
    http, clock = tracker
    clock.set(f"{asked}:00+00:00")
    auth = join(http, "mike", home)
    first = http.post("/api/v1/turns", json=turn("mike", 300), headers=auth)
    assert first.status_code == 201, first.text
    r = change_zone(http, auth, away)
    assert r.status_code == 200, r.text
    assert (r.json()["timezone"], r.json()["next_timezone"]) == (home, away)
    assert r.json()["timezone_from"].replace("+00:00", "Z") == expected_from
    days = [first.json()["day"]]
    for at, status, day in tries:
        clock.set(f"{at}:00+00:00")
        r = http.post("/api/v1/turns", json=turn("mike", 100), headers=auth)
        assert r.status_code == status, (at, r.text)
        if status == 409:
            assert f"already took a turn on {day}" in r.json()["detail"]
        elif status == 201:
            assert r.json()["day"] == day
            days.append(day)
    assert days == sorted(set(days))
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"], me["timezone_from"]) == (away, None, None)
    history = http.get("/api/v1/players/mike/turns").json()["turns"]
    assert [t["day"] for t in history] == days[::-1]
    assert history[-1]["local_time"] == first.json()["local_time"]


def test_a_change_not_yet_in_force_is_kept_replaced_or_called_off(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    auth = join(http, "heather", "America/New_York")
    paris = change_zone(http, auth, "Europe/Paris").json()
    clock.set("2026-03-10T20:00:00+00:00")
    again = change_zone(http, auth, "Europe/Paris").json()
    assert again["timezone_from"] == paris["timezone_from"]  # asked again: not put off
    tokyo = change_zone(http, auth, "Asia/Tokyo").json()
    assert (tokyo["next_timezone"], tokyo["timezone_from"]) == (
        "Asia/Tokyo",
        "2026-03-11T15:00:00Z",
    )
    off = change_zone(http, auth, "America/New_York")
    assert off.status_code == 200, off.text
    assert (off.json()["timezone"], off.json()["next_timezone"]) == ("America/New_York", None)
    clock.set("2026-03-12T13:00:00+00:00")  # 09:00 in New York, 22:00 in Tokyo
    r = http.post("/api/v1/turns", json=turn("heather"), headers=auth)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-12", r.text
    # a change in force is the zone a later change starts from
    change_zone(http, auth, "Europe/London")
    clock.set("2026-03-14T12:00:00+00:00")
    r = change_zone(http, auth, "Europe/London")
    assert r.status_code == 409 and "'Europe/London'" in r.json()["detail"]
    r = change_zone(http, auth, "America/New_York").json()
    assert (r["timezone"], r["next_timezone"]) == ("Europe/London", "America/New_York")
    assert r["timezone_from"] == "2026-03-15T04:00:00Z"


def test_a_turn_played_before_a_change_west_is_dated_in_the_zone_it_was_played_in(
    sqlite_tracker, join, turn
):
    """Paris to New York: the change takes over at New York's midnight (04:00 UTC), 6 hours into
    Paris's 11th. A turn rolled in those hours was played on the 11th (Paris's day then), so
    sent at 09:00 in New York on the 11th it counts: it is not dated in New York's zone, where
    it was still the 10th (refused as played yesterday)."""
    http, clock = sqlite_tracker
    clock.set("2026-06-10T10:00:00+00:00")  # 12:00 in Paris
    auth = join(http, "kenny", "Europe/Paris")
    assert (
        change_zone(http, auth, "America/New_York")
        .json()["timezone_from"]
        .startswith("2026-06-11T04:00:00")
    )
    clock.set("2026-06-11T13:00:00+00:00")  # 09:00 in New York on the 11th
    played = turn("kenny", 300, age_s=10 * 3600)  # 03:00 UTC: 05:00 on the 11th in Paris
    r = http.post("/api/v1/turns", json=played, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["day"] == "2026-06-11"
    second = http.post("/api/v1/turns", json=turn("kenny", 50), headers=auth)
    assert second.status_code == 409, second.text


def test_the_new_zone_is_in_force_from_its_first_midnight_itself(sqlite_tracker, join):
    """``timezone_from`` is the first instant of the new zone's days: a second before it the
    change is still pending, at it the new zone is the player's (its day has begun)."""
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    auth = join(http, "heather", "America/New_York")
    start = change_zone(http, auth, "Europe/Paris").json()["timezone_from"]
    assert start == "2026-03-11T23:00:00Z"
    clock.set("2026-03-11T22:59:59+00:00")
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"]) == ("America/New_York", "Europe/Paris")
    clock.set("2026-03-11T23:00:00+00:00")
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"], me["timezone_from"]) == (
        "Europe/Paris",
        None,
        None,
    )


def test_a_change_asked_again_the_next_day_is_not_put_off(sqlite_tracker, join):
    """Asked again once New York's next day has begun, the pending change to Paris keeps its
    start (it would be a day later if asked for the first time now)."""
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    auth = join(http, "heather", "America/New_York")
    assert change_zone(http, auth, "Europe/Paris").json()["timezone_from"] == "2026-03-11T23:00:00Z"
    clock.set("2026-03-11T13:00:00+00:00")  # 09:00 on the 11th in New York
    again = change_zone(http, auth, "Europe/Paris")
    assert again.status_code == 200, again.text
    assert (again.json()["next_timezone"], again.json()["timezone_from"]) == (
        "Europe/Paris",
        "2026-03-11T23:00:00Z",
    )


@pytest.mark.browser
def test_the_time_zone_form_changes_it_and_ties_mistakes_to_their_inputs(
    chromium, sqlite_tracker, join
):
    """In chromium: the add-roll page links to the form; a wrong password and a zone that is
    none come back on the form, tied to their inputs, what was typed kept; a right one says
    from when the new zone counts, and the player's page shows it."""
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    join(http, "jeff", "America/New_York")
    page = chromium.new_page(viewport={"width": 360, "height": 640}, timezone_id="UTC")
    page.goto(f"{http.base_url}/add")
    page.get_by_role("link", name="Change your time zone").click()
    assert page.title() == "Change time zone - Morning Roll"
    page.fill("#name", "jeff")
    page.fill("#password", "wrong-password")
    page.fill("#timezone", "Europe/Paris")
    page.click("button")
    assert page.title() == "Error: Change time zone - Morning Roll"
    assert page.get_attribute("#password", "aria-invalid") == "true"
    assert page.input_value("#timezone") == "Europe/Paris"
    page.fill("#password", "hunter2hunter2")
    page.fill("#timezone", "Europe/Pariss")
    page.click("button")
    assert "'Europe/Pariss'" in page.get_by_role("alert").inner_text()
    ids = page.get_attribute("#timezone", "aria-describedby").split()
    assert "'Europe/Pariss'" in page.locator(f"#{ids[-1]}").inner_text()
    assert page.evaluate("document.activeElement.id") == "timezone"
    assert http.get("/api/v1/players/jeff/turns").json()["player"]["next_timezone"] is None
    page.fill("#password", "hunter2hunter2")
    page.fill("#timezone", "Europe/Paris")
    page.click("button")
    assert page.title() == "Time zone changed - Morning Roll"
    said = page.locator("main").inner_text()
    assert "jeff's turns count in Europe/Paris from 2026-03-12 00:00 there" in said
    assert "until then they count in America/New_York" in said
    page.get_by_role("link", name="jeff").click()
    assert "Time zone America/New_York (Europe/Paris from 2026-03-12)" in page.inner_text("main")


def test_a_database_of_revision_0003_keeps_its_players_and_goes_back_down(
    sqlite_url, clock, serve, password_hash
):
    """A player stored at revision 0003 has their zone after the upgrade, with no change asked
    for, and may ask for one; the migration goes back down too."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from service.tracker.db import MIGRATIONS, make_engine, migrate

    clock.set("2026-03-10T15:00:00+00:00")
    engine = make_engine(sqlite_url)
    migrate(engine, "0003")
    players = sa.table(
        "players",
        *(sa.column(c) for c in ("name", "name_key", "password_hash", "timezone", "is_admin")),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    with engine.begin() as conn:
        conn.execute(
            sa.insert(players).values(
                name="Old",
                name_key="old",
                password_hash=password_hash,
                timezone="America/Chicago",
                is_admin=False,
                created_at=clock(),
            )
        )
    engine.dispose()
    app = create_app(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        login = http.post("/api/v1/tokens", json={"name": "old", "password": "hunter2hunter2"})
        player = login.json()["player"]
        assert (player["timezone"], player["next_timezone"]) == ("America/Chicago", None)
        auth = {"Authorization": f"Bearer {login.json()['token']}"}
        assert change_zone(http, auth, "Europe/Paris").json()["next_timezone"] == "Europe/Paris"
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with app.state.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0003")
    columns = {c["name"] for c in sa.inspect(app.state.engine).get_columns("players")}
    assert {"timezone", "name"} <= columns and not {"next_timezone", "timezone_from"} & columns
    app.state.db.dispose()
