"""Scores are reported day-of: a turn that reaches the tracker on a later local day than the one
it was played on (an outbox that delivered it late) is refused, and never takes the slot of the
day it arrives on; a turn played and sent the same day still counts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from service.tracker import create_app
from service.tracker_client import TrackerClient, TrackerRejected, TurnSubmission


def test_a_turn_played_yesterday_is_refused_and_todays_still_counts(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-03-11T19:00:00+00:00")  # Pago Pago (UTC-11): Mar 11 08:00
    auth = join(http, "shea", "Pacific/Pago_Pago")
    late = turn("shea", 1000, age_s=12 * 3600 + 60)  # played Mar 10 19:59 local
    r = http.post("/api/v1/turns", json=late, headers=auth)
    assert r.status_code == 403, r.text
    assert r.json()["detail"] == (
        "scores must be reported day-of: this turn was played on 2026-03-10 and it is "
        "2026-03-11 now in Pacific/Pago_Pago, so it is not entered (a missed day is a missed turn)"
    )
    today = http.post("/api/v1/turns", json=turn("shea", 50, age_s=30), headers=auth)
    assert today.status_code == 201 and today.json()["day"] == "2026-03-11"
    turns = http.get("/api/v1/players/shea/turns").json()["turns"]
    assert [(t["day"], t["score"]) for t in turns] == [("2026-03-11", 50)]


def test_a_turn_played_at_7_59_and_sent_at_8_counts(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    clock.set("2026-03-10T18:00:30+00:00")  # Kiritimati (UTC+14): Mar 11 08:00:30
    auth = join(http, "kenny", "Pacific/Kiritimati")
    r = http.post("/api/v1/turns", json=turn("kenny", 300, age_s=90), headers=auth)
    assert r.status_code == 201 and r.json()["day"] == "2026-03-11"


@pytest.mark.parametrize("age", [-1, 1e12, "soon"])
def test_a_nonsense_age_is_named(sqlite_tracker, join, turn, age):
    http, _ = sqlite_tracker
    auth = join(http, "jeff")
    r = http.post("/api/v1/turns", json=turn("jeff", age_s=age), headers=auth)
    assert r.status_code == 422 and "age_s" in r.json()["detail"]
    assert http.get("/api/v1/players/jeff/turns").json()["turns"] == []


def test_an_outbox_turn_delivered_the_next_day_is_refused_not_counted_today(
    sqlite_url, clock, serve, seed_players, tmp_path, unused_port
):
    clock.set("2026-07-04T15:00:00+00:00")  # Chicago (CDT): Jul 4 10:00
    app = create_app(sqlite_url, clock=clock)
    token = seed_players(app, ["tom"], tz="America/Chicago")["tom"]["Authorization"][7:]
    url = f"http://127.0.0.1:{unused_port}"
    client = TrackerClient(url, token=token, outbox_dir=tmp_path, retries=0)
    yesterday = TurnSubmission(player="tom", score=2500)
    client.queue(yesterday)  # the tracker is down all day
    entry = client.outbox.find(yesterday.idempotency_key)
    entry.created_at = (datetime.now(UTC) - timedelta(hours=24)).isoformat()
    client.outbox.write(entry)

    serve(app, port=unused_port)  # back the next morning
    report = client.deliver_pending(force=True)
    assert list(report.rejected) == [yesterday.idempotency_key]
    assert (
        "played on 2026-07-03 and it is 2026-07-04 now"
        in report.rejected[yesterday.idempotency_key]
    )
    stored = client.submit_turn(TurnSubmission(player="tom", score=600))  # today's own turn
    assert (stored["day"], stored["score"]) == ("2026-07-04", 600)
    client.close()
    app.state.db.dispose()


def test_a_tracker_older_than_age_s_gets_the_turn_without_it(tmp_path):
    bodies: list[dict] = []

    def older_tracker(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/me":  # the client asks the player's zone for the day
            return httpx.Response(200, json={"name": "tom", "timezone": "UTC"})
        body = json.loads(request.content)
        bodies.append(body)
        if "age_s" in body:
            return httpx.Response(422, json={"detail": "age_s: Extra inputs are not permitted"})
        return httpx.Response(201, json={**body, "id": 1, "day": "2026-07-04"})

    client = TrackerClient(
        "http://tracker.test",
        token="t",
        outbox_dir=tmp_path,
        transport=httpx.MockTransport(older_tracker),
    )
    stored = client.submit_turn(TurnSubmission(player="tom", score=600))
    assert stored["id"] == 1 and [("age_s" in b) for b in bodies] == [True, False]
    with pytest.raises(KeyError):
        client.deliver("missing-key")
    client.close()


def test_a_refusal_that_names_age_s_otherwise_is_not_retried(tmp_path):
    calls: list[dict] = []

    def strict(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/me":  # a tracker, as the client checks after a refusal
            return httpx.Response(200, json={"name": "tom", "timezone": "UTC"})
        calls.append(json.loads(request.content))
        return httpx.Response(403, json={"detail": "age_s says the turn was played yesterday"})

    client = TrackerClient(
        "http://tracker.test", token="t", outbox_dir=tmp_path, transport=httpx.MockTransport(strict)
    )
    with pytest.raises(TrackerRejected, match="played yesterday"):
        client.submit_turn(TurnSubmission(player="tom", score=600))
    assert len(calls) == 1
    client.close()
