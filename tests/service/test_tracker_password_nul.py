"""The ``/password`` form takes the passwords ``PUT /api/v1/me/password`` takes: one with a NUL
character too (only hashed, never stored as text), typed twice; a name with one stays refused.
Against a real server and SQLite database."""

from __future__ import annotations

import httpx
import pytest

OLD, NEW = "old-password-1", "new\x00password-2"


def login(http: httpx.Client, name: str, password: str) -> httpx.Response:
    return http.post("/api/v1/tokens", json={"name": name, "password": password})


def form(name: str, current: str, new: str, again: str) -> dict[str, str]:
    return {"name": name, "password": current, "new_password": new, "new_password_again": again}


@pytest.mark.parametrize("old", [OLD, "old\x00password-1"])
def test_the_form_sets_a_password_with_a_nul_character_as_the_api_does(sqlite_tracker, join, old):
    http, _ = sqlite_tracker
    api = join(http, "nina", password=old)
    r = http.put("/api/v1/me/password", json={"password": old, "new_password": NEW}, headers=api)
    assert r.status_code == 200, r.text  # the API takes it

    join(http, "omar", password=old)
    r = http.post("/password", data=form("omar", old, NEW, NEW))
    assert r.status_code == 200 and "Password changed" in r.text, r.text
    assert login(http, "omar", old).status_code == 401
    assert login(http, "omar", NEW).status_code == 201
    assert login(http, "omar", NEW.replace("\x00", "")).status_code == 401


def test_a_new_password_with_a_nul_character_must_still_match_twice(sqlite_tracker, join):
    http, _ = sqlite_tracker
    join(http, "pia", password=OLD)
    r = http.post("/password", data=form("pia", OLD, NEW, NEW.replace("\x00", "")))
    assert r.status_code == 422, r.text
    assert "expected the new password twice, got two different ones" in r.text
    assert "NUL" not in r.text
    assert login(http, "pia", OLD).status_code == 201  # unchanged


def test_a_name_with_a_nul_character_stays_refused_by_the_form(sqlite_tracker, join):
    http, _ = sqlite_tracker
    join(http, "rue", password=OLD)
    r = http.post("/password", data=form("ru\x00e", OLD, NEW, NEW))
    assert r.status_code == 422 and "NUL" in r.text, r.text
    assert login(http, "rue", OLD).status_code == 201  # unchanged
