"""Edges of the tracker's JSON API and pages over a real tracker: a zone change between zones
with one offset and its exact instant, a pending change asked again a day later, two password
changes racing, a history page of exactly ``limit`` turns, a roll without a photo, the roll
call of a player without turns, a round's page among the other rounds, a day cursor in ISO's
basic format."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from service.tracker import security

OLD = "hunter2hunter2"


def zone(http: httpx.Client, auth: dict, name: str) -> httpx.Response:
    return http.put("/api/v1/me/timezone", json={"timezone": name}, headers=auth)


def test_a_change_to_a_zone_with_the_same_offset_takes_over_at_the_next_midnight(
    sqlite_tracker, join
):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")
    auth = join(http, "pia", "Europe/Paris")
    r = zone(http, auth, "Europe/Berlin")
    assert r.json()["timezone_from"] == "2026-03-10T23:00:00Z", r.text  # not a day later
    clock.set("2026-03-10T22:59:59+00:00")
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"]) == ("Europe/Paris", "Europe/Berlin")
    clock.set("2026-03-10T23:00:00+00:00")  # the very instant it takes over
    me = http.get("/api/v1/me", headers=auth).json()
    assert (me["timezone"], me["next_timezone"], me["timezone_from"]) == (
        "Europe/Berlin",
        None,
        None,
    )


def test_a_pending_change_asked_again_on_a_later_day_is_not_put_off(sqlite_tracker, join):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T15:00:00+00:00")  # 11:00 in New York
    auth = join(http, "kenny", "America/New_York")
    asked = zone(http, auth, "Europe/Paris").json()["timezone_from"]
    assert asked == "2026-03-11T23:00:00Z"
    clock.set("2026-03-11T14:00:00+00:00")  # 10:00 on the 11th in New York: not yet in force
    again = zone(http, auth, "Europe/Paris")
    assert again.status_code == 200, again.text
    assert (again.json()["next_timezone"], again.json()["timezone_from"]) == ("Europe/Paris", asked)


class MeetingHasher:
    """The real hasher, whose ``hash`` waits until two hashes are under way: two password
    changes have both checked the current password before either stores its new one."""

    def __init__(self, real) -> None:
        self.real = real
        self.meet = threading.Barrier(2, timeout=20)

    def hash(self, password: str) -> str:
        self.meet.wait()
        return self.real.hash(password)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def both_at_once(send, bodies: list[dict]) -> list[httpx.Response]:
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(send, bodies))


def test_two_password_changes_at_once_store_one_and_refuse_the_other(
    sqlite_tracker, join, monkeypatch
):
    http, _ = sqlite_tracker
    auth = join(http, "uma", password=OLD)
    monkeypatch.setattr(security, "_hasher", MeetingHasher(security._hasher))
    url = str(http.base_url)

    def send(body: dict) -> httpx.Response:
        with httpx.Client(base_url=url, timeout=60) as c:
            return c.put("/api/v1/me/password", json=body, headers=auth)

    news = ["first-new-password", "second-new-password"]
    answers = both_at_once(send, [{"password": OLD, "new_password": n} for n in news])
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    lost = next(a for a in answers if a.status_code == 409)
    assert "changed meanwhile: nothing was changed now" in lost.json()["detail"]
    won = news[[a.status_code for a in answers].index(200)]
    logins = {p: http.post("/api/v1/tokens", json={"name": "uma", "password": p}) for p in news}
    assert {p: r.status_code for p, r in logins.items()} == {
        p: 201 if p == won else 401 for p in news
    }


def test_two_password_forms_at_once_store_one_and_say_why_at_the_password(
    sqlite_tracker, join, monkeypatch
):
    http, _ = sqlite_tracker
    join(http, "vic", password=OLD)
    monkeypatch.setattr(security, "_hasher", MeetingHasher(security._hasher))
    url = str(http.base_url)

    def send(new: str) -> httpx.Response:
        data = {"name": "vic", "password": OLD, "new_password": new, "new_password_again": new}
        with httpx.Client(base_url=url, timeout=60) as c:
            return c.post("/password", data=data)

    answers = both_at_once(send, ["first-new-password", "second-new-password"])
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    lost = next(a for a in answers if a.status_code == 409).text
    assert "changed meanwhile" in lost
    password_input = lost.split('<input id="password"')[1].split(">")[0]
    assert 'aria-invalid="true"' in password_input


def test_a_history_of_exactly_limit_turns_has_no_next_page(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    auth = join(http, "jeff")
    for day in ("2026-06-14", "2026-06-15"):
        clock.set(f"{day}T12:00:00+00:00")
        assert http.post("/api/v1/turns", json=turn("jeff"), headers=auth).status_code == 201
    whole = http.get("/api/v1/players/jeff/turns", params={"limit": 2})
    assert (whole.json()["next"], whole.json()["next_before"]) == (None, None)
    assert "link" not in whole.headers
    first = http.get("/api/v1/players/jeff/turns", params={"limit": 1})
    assert first.json()["next_before"] == "2026-06-15" and "link" in first.headers


def test_a_roll_without_a_photo_has_no_photo_address(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "mike")
    body = turn("mike", rolls=[{"values": [1, 5]}])
    stored = http.post("/api/v1/turns", json=body, headers=auth).json()
    assert stored["rolls"][0]["photo_url"] is None
    for position in (0, 1):
        r = http.get(f"/api/v1/turns/{stored['id']}/rolls/{position}/photo.jpg")
        assert r.status_code == 404, (position, r.status_code, r.content[:40])
        assert r.json() == {"detail": f"turn {stored['id']} has no photo for roll {position}"}


def test_the_roll_call_of_a_player_without_turns_has_no_last_day(sqlite_tracker, join):
    http, _ = sqlite_tracker
    join(http, "shea")
    [shea] = http.get("/api/v1/rollcall").json()["players"]
    assert (shea["player"], shea["turns"], shea["last_day"]) == ("shea", 0, None)


def test_a_rounds_page_lists_the_other_rounds_but_not_itself(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    auth = join(http, "molly")
    for when in ("2025-06-15", "2026-06-15"):
        clock.set(f"{when}T12:00:00+00:00")
        assert http.post("/api/v1/turns", json=turn("molly"), headers=auth).status_code == 201
    page = http.get("/rounds/2025").text
    others = page.split("Other rounds:")[1].split("</p>")[0]
    assert 'href="/rounds/2026"' in others and "/rounds/2025" not in others


@pytest.mark.parametrize("path", ["/api/v1/players/jeff/turns", "/players/jeff"])
def test_a_day_cursor_in_isos_basic_format_is_refused(sqlite_tracker, join, path):
    http, _ = sqlite_tracker
    join(http, "jeff")
    r = http.get(path, params={"before": "20260301"})
    assert r.status_code == 422
    assert "expected a day written YYYY-MM-DD, e.g. 2026-03-01, got " in r.text
    assert "20260301" in r.text.split("got ")[1]
