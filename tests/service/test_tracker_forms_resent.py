"""The site's forms sent again or with mistakes, over a real tracker: a stored add-roll form
sent again is the stored turn only when it holds the same roll (the same day, the score first
sent, the same comment), a score typed with spaces around it is taken, and a form sent back
with its problems ties each to its input and focuses one."""

from __future__ import annotations

import re

import httpx
import pytest

from service.tracker import create_app, store

PASSWORD = "long-password"


def form_key(http: httpx.Client) -> str:
    return http.get("/add").text.split('name="idempotency_key" value="')[1].split('"')[0]


def turns_of(http: httpx.Client, name: str) -> list[tuple[str, int, str]]:
    turns = http.get(f"/api/v1/players/{name}/turns").json()["turns"]
    return [(t["day"], t["score"], t["comment"]) for t in turns]


@pytest.fixture
def site(sqlite_url, clock, serve):
    """A tracker with the player kenny (UTC) and the administrator ann, at 10:00 UTC."""
    clock.set("2026-08-08T10:00:00+00:00")
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    with app.state.sessionmaker() as session:
        store.ensure_admin(session, "ann", "admin-password", "UTC", clock())
        session.commit()
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        r = http.post(
            "/api/v1/players", json={"name": "kenny", "password": PASSWORD, "timezone": "UTC"}
        )
        assert r.status_code == 201, r.text
        yield http, clock
    app.state.db.dispose()


def test_the_same_roll_sent_again_the_next_day_is_not_passed_off_as_that_days(site):
    """A form kept open since yesterday holding the very same score and comment is still
    yesterday's turn: today's roll is not said to be stored."""
    http, clock = site
    data = {"name": "kenny", "password": PASSWORD, "idempotency_key": form_key(http)}
    data |= {"score": "650", "comment": "two fives"}
    assert http.post("/add", data=data).status_code == 201
    clock.set("2026-08-09T09:00:00+00:00")
    again = http.post("/add", data=data)
    assert again.status_code == 409, again.text
    assert "it holds kenny&#x27;s turn of 2026-08-08 (650 points)" in again.text
    assert turns_of(http, "kenny") == [("2026-08-08", 650, "two fives")]


def test_a_new_comment_in_a_form_already_sent_stores_nothing(site):
    http, _ = site
    data = {"name": "kenny", "password": PASSWORD, "idempotency_key": form_key(http)}
    assert http.post("/add", data={**data, "score": "300", "comment": "triples"}).status_code == 201
    changed = http.post("/add", data={**data, "score": "300", "comment": "three twos"})
    assert changed.status_code == 409 and "nothing was stored now" in changed.text
    assert turns_of(http, "kenny") == [("2026-08-08", 300, "triples")]


def test_a_form_sent_again_after_a_correction_is_the_turn_as_first_sent(site):
    """The form holds the score the player sent; an administrator corrected it since: sent
    again the same day it is that turn (with the corrected score), and the next day the
    refusal names the score first sent."""
    http, clock = site
    data = {"name": "kenny", "password": PASSWORD, "idempotency_key": form_key(http)}
    first = http.post("/add", data={**data, "score": "5000"})
    turn_id = int(re.search(r'href="/turns/(\d+)"', first.text).group(1))
    token = http.post("/api/v1/tokens", json={"name": "ann", "password": "admin-password"})
    admin = {"Authorization": f"Bearer {token.json()['token']}"}
    fixed = http.patch(
        f"/api/v1/turns/{turn_id}", json={"score": 500, "reason": "typo"}, headers=admin
    )
    assert fixed.status_code == 200, fixed.text
    again = http.post("/add", data={**data, "score": "5000"})
    assert again.status_code == 201, again.text
    assert "scored <strong>500</strong> on 2026-08-08" in again.text
    clock.set("2026-08-09T09:00:00+00:00")
    late = http.post("/add", data={**data, "score": "5000"})
    assert late.status_code == 409 and "(5000 points)" in late.text, late.text
    assert turns_of(http, "kenny") == [("2026-08-08", 500, "")]


def test_a_score_typed_with_spaces_around_it_is_taken(site):
    http, _ = site
    data = {"name": "kenny", "password": PASSWORD, "idempotency_key": form_key(http)}
    r = http.post("/add", data={**data, "score": " 350 "})
    assert r.status_code == 201, r.text
    assert turns_of(http, "kenny") == [("2026-08-08", 350, "")]


def inputs(page: str) -> dict[str, str]:
    """Each input's attributes after its id, by id."""
    return dict(re.findall(r'<input id="(\w+)"([^>]*)>', page))


def test_a_form_with_several_mistakes_focuses_only_the_first(site):
    http, _ = site
    r = http.post("/register", data={"name": "-bad", "password": "short", "timezone": "Mars/X"})
    assert r.status_code == 422
    fields = inputs(r.text)
    assert all('aria-invalid="true"' in fields[f] for f in ("name", "password", "timezone"))
    assert [f for f, attrs in fields.items() if "autofocus" in attrs] == ["name"]


def test_a_name_taken_is_a_problem_of_the_name_field(site):
    http, _ = site
    r = http.post("/register", data={"name": "Kenny", "password": PASSWORD, "timezone": "UTC"})
    assert r.status_code == 409, r.text
    fields = inputs(r.text)
    assert 'aria-invalid="true"' in fields["name"] and "autofocus" in fields["name"]
    assert 'href="#name"' in r.text  # the summary links to the field
    assert all("aria-invalid" not in fields[f] for f in ("password", "timezone"))
