"""Edges of the site's forms over a real tracker: a refusal from the store is tied to the input
it is about."""

from __future__ import annotations

import re

import pytest


def input_tag(html: str, name: str) -> str:
    return re.search(rf'<input id="{name}"[^>]*>', html).group(0)


def test_a_zone_already_in_force_is_a_problem_of_the_zone_input(sqlite_tracker, join):
    """409: the zone is in force with nothing to call off; the form says so at the zone."""
    http, _ = sqlite_tracker
    join(http, "jeff", "Europe/Paris")
    form = {"name": "jeff", "password": "hunter2hunter2", "timezone": "Europe/Paris"}
    r = http.post("/timezone", data=form)
    assert r.status_code == 409, r.text
    zone = input_tag(r.text, "timezone")
    assert 'aria-invalid="true"' in zone and "autofocus" in zone
    assert 'value="Europe/Paris"' in zone
    for other in ("name", "password"):
        assert "aria-invalid" not in input_tag(r.text, other)
    assert "Europe/Paris" in r.text.split('role="alert"')[1].split("</div>")[0]
    me = http.get("/api/v1/players/jeff/turns").json()["player"]
    assert (me["timezone"], me["next_timezone"]) == ("Europe/Paris", None)


def errors_at(html: str, name: str) -> list[str]:
    """The errors shown in the paragraph of the input ``name`` (between its label and it)."""
    para = re.search(rf'<p><label for="{name}">((?:(?!</p>).)*)<input id="{name}"', html, re.S)
    return re.findall(r'<span class="error" id="error-\d+">([^<]*)</span>', para.group(1))


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/add", {"score": "300"}),
        ("/password", {"new_password": "a-new-one-9", "new_password_again": "a-new-one-9"}),
    ],
)
def test_a_refused_login_is_shown_at_the_password_input_once(sqlite_tracker, join, path, form):
    """A wrong password is a problem of the name and the password: shown once, above the
    password input (the second of the two), and both inputs are marked invalid."""
    http, _ = sqlite_tracker
    join(http, "kai")
    r = http.post(path, data={"name": "kai", "password": "not-kai-password", **form})
    assert r.status_code == 401, r.text
    assert errors_at(r.text, "name") == []
    (shown,) = errors_at(r.text, "password")
    assert shown.startswith("Error: ") and "wrong" in shown
    for both in ("name", "password"):
        assert 'aria-invalid="true"' in input_tag(r.text, both)
    assert "autofocus" in input_tag(r.text, "name")
    summary = r.text.split('role="alert"')[1].split("</div>")[0]  # links to the focused input
    (item,) = re.findall(r'<li><a href="(#\w+)">(\w+):', summary)
    assert item == ("#name", "Player")


@pytest.mark.parametrize("key", [None, "", "short", "not a key!", "k" * 65])
def test_a_form_without_its_hidden_key_is_sent_back_fresh_in_plain_words(sqlite_tracker, join, key):
    """The hidden key missing or damaged (a form not from this site, or cut short): nothing is
    stored, and the page says so in words a player reads (not the field's name nor pydantic's),
    with a fresh form holding a good key and what was typed."""
    http, _ = sqlite_tracker
    join(http, "lea")
    form = {"name": "lea", "password": "hunter2hunter2", "score": "350", "comment": "fine day"}
    if key is not None:
        form["idempotency_key"] = key
    r = http.post("/add", data=form)
    assert r.status_code == 422, r.text
    summary = r.text.split('role="alert"')[1].split("</div>")[0]
    assert "hidden key" in summary and "nothing was stored" in summary
    assert "idempotency" not in summary and "String should" not in summary
    (fresh,) = re.findall(r'name="idempotency_key" value="([^"]*)"', r.text)
    assert re.fullmatch(r"[A-Za-z0-9_\-]{8,64}", fresh) and fresh != key
    assert 'value="350"' in input_tag(r.text, "score") and "fine day" in r.text
    assert http.get("/api/v1/players/lea/turns").json()["turns"] == []
    r = http.post("/add", data={**form, "idempotency_key": fresh})  # the fresh form works
    assert r.status_code == 201, r.text
