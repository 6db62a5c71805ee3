"""The add-roll form as a daily player uses it: a form sent twice stores one turn, and a form
kept open since an earlier day (a phone's tab, the back button) never passes yesterday's turn
off as today's."""

from __future__ import annotations


def form_key(http) -> str:
    return http.get("/add").text.split('name="idempotency_key" value="')[1].split('"')[0]


def test_a_form_kept_open_since_yesterday_does_not_hide_todays_roll(sqlite_tracker, join):
    http, clock = sqlite_tracker
    clock.set("2026-08-08T10:00:00+00:00")
    join(http, "kenny", "UTC", password="long-password")
    data = {"name": "kenny", "password": "long-password", "idempotency_key": form_key(http)}
    first = http.post("/add", data={**data, "score": "650"})
    assert first.status_code == 201 and "scored <strong>650</strong>" in first.text

    clock.set("2026-08-09T09:00:00+00:00")  # the next morning, the same form again
    stale = http.post("/add", data={**data, "score": "100"})
    assert stale.status_code == 409, stale.text
    assert "this form was already sent: it holds kenny&#x27;s turn of 2026-08-08 (650 points)" in (
        stale.text
    )
    fresh = stale.text.split('name="idempotency_key" value="')[1].split('"')[0]
    assert fresh != data["idempotency_key"]
    today = http.post("/add", data={**data, "idempotency_key": fresh, "score": "100"})
    assert today.status_code == 201 and "on 2026-08-09" in today.text
    turns = http.get("/api/v1/players/kenny/turns").json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [("2026-08-09", 100), ("2026-08-08", 650)]


def test_the_same_form_sent_twice_the_same_day_is_one_turn(sqlite_tracker, join):
    http, clock = sqlite_tracker
    clock.set("2026-02-28T23:30:00+00:00")  # Kiritimati (UTC+14): Mar 1 13:30
    join(http, "jeff", "Pacific/Kiritimati", password="long-password")
    data = {
        "name": "jeff",
        "password": "long-password",
        "idempotency_key": form_key(http),
        "score": "300",
        "comment": "triples",
    }
    assert http.post("/add", data=data).status_code == 201
    clock.set("2026-03-01T05:00:00+00:00")  # 19:00 there: sent again (a retry, a reload)
    again = http.post("/add", data=data)
    assert again.status_code == 201 and "scored <strong>300</strong> on 2026-03-01" in again.text
    changed = http.post("/add", data={**data, "score": "500"})  # back, a new score typed in
    assert changed.status_code == 409 and "nothing was stored now" in changed.text
    turns = http.get("/api/v1/players/jeff/turns").json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [("2026-03-01", 300)]
