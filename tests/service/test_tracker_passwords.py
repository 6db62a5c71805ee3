"""A player changes their password (``PUT /api/v1/me/password`` and the ``/password`` form) and
logs out everywhere (``DELETE /api/v1/tokens``), against a real server and SQLite database."""

from __future__ import annotations

import httpx
import pytest

from service.tracker import create_app
from service.tracker.throttle import MAX_FAILURES

OLD, NEW = "old-password-1", "new-password-2"
PASSWORD_FORM = ("name", "password", "new_password", "new_password_again")


def login(http: httpx.Client, name: str, password: str) -> httpx.Response:
    return http.post("/api/v1/tokens", json={"name": name, "password": password})


def bearer(r: httpx.Response) -> dict[str, str]:
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def change(http: httpx.Client, auth: dict, current: str, new: str) -> httpx.Response:
    return http.put(
        "/api/v1/me/password", json={"password": current, "new_password": new}, headers=auth
    )


def test_a_new_password_logs_in_and_ends_every_other_session(sqlite_tracker, join):
    http, _ = sqlite_tracker
    phone = join(http, "nina", password=OLD)
    laptop = bearer(login(http, "nina", OLD))
    other = join(http, "omar", password=OLD)  # another player's session is left alone

    r = change(http, phone, OLD, NEW)
    assert r.status_code == 200, r.text
    assert r.json()["player"]["name"] == "nina" and r.json()["tokens_revoked"] == 1

    assert login(http, "nina", OLD).status_code == 401
    assert login(http, "nina", NEW).status_code == 201
    assert http.get("/api/v1/me", headers=phone).json()["name"] == "nina"  # the one used
    refused = http.get("/api/v1/me", headers=laptop)
    assert refused.status_code == 401 and "unknown or revoked token" in refused.text
    assert http.get("/api/v1/me", headers=other).status_code == 200


def test_a_wrong_current_password_is_a_failed_login_of_that_name(sqlite_tracker, join):
    http, _ = sqlite_tracker
    auth = join(http, "pia", password=OLD)
    for _ in range(MAX_FAILURES):
        r = change(http, auth, "not-my-password", NEW)
        assert r.status_code == 401, r.text
        assert "expected pia's current password in 'password', got a wrong one" in r.text
        assert "not-my-password" not in r.text
    held = change(http, auth, OLD, NEW)  # the right one now waits too, as a login would
    assert held.status_code == 429 and int(held.headers["Retry-After"]) > 0
    assert "too many wrong passwords for 'pia'" in held.text
    assert login(http, "pia", OLD).status_code == 429
    assert http.get("/api/v1/me", headers=auth).status_code == 200  # nothing was changed


def test_wrong_current_passwords_count_for_the_address(sqlite_url, clock, serve, monkeypatch):
    monkeypatch.setenv("DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS", "2")
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    try:
        with httpx.Client(base_url=serve(app).url, timeout=30) as http:
            for name in ("quin", "rosa"):
                body = {"name": name, "password": OLD, "timezone": "UTC"}
                assert http.post("/api/v1/players", json=body).status_code == 201
            auth = bearer(login(http, "quin", OLD))
            assert [change(http, auth, "wrong-one-x", NEW).status_code for _ in "ab"] == [401, 401]
            held = login(http, "rosa", OLD)  # another name, the same address
            assert held.status_code == 429, held.text
            assert "DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS" in held.text
    finally:
        app.state.db.dispose()


@pytest.mark.parametrize(
    ("new", "why"),
    [
        ("short", "'new_password': String should have at least 8 characters"),
        (OLD, "expected a new password different from the current one, got the same"),
        ("x" * 257, "'new_password': String should have at most 256 characters"),
    ],
)
def test_a_weak_or_unchanged_new_password_changes_nothing(sqlite_tracker, join, new, why):
    http, _ = sqlite_tracker
    auth = join(http, "sven", password=OLD)
    laptop = bearer(login(http, "sven", OLD))
    r = change(http, auth, OLD, new)
    assert r.status_code == 422 and why in r.json()["detail"], r.text
    assert new not in r.text  # no password echoed back
    assert login(http, "sven", OLD).status_code == 201
    assert http.get("/api/v1/me", headers=laptop).status_code == 200


def test_the_new_password_follows_the_registration_rules(sqlite_tracker):
    http, _ = sqlite_tracker
    reg = http.post(
        "/api/v1/players", json={"name": "tess", "password": "short", "timezone": "UTC"}
    )
    assert reg.status_code == 422
    rule = reg.json()["detail"].removeprefix("'password': ")
    auth = {"Authorization": "Bearer x"}
    r = change(http, auth, OLD, "short")  # the body is checked before the token
    assert r.json()["detail"] == f"'new_password': {rule}"


def test_log_out_everywhere_revokes_every_token_of_the_player(sqlite_tracker, join):
    http, _ = sqlite_tracker
    phone = join(http, "uma", password=OLD)
    laptop = bearer(login(http, "uma", OLD))
    other = join(http, "vic", password=OLD)
    assert http.delete("/api/v1/tokens", headers=laptop).status_code == 204
    for auth in (phone, laptop):
        assert http.get("/api/v1/me", headers=auth).status_code == 401
    again = http.delete("/api/v1/tokens", headers=laptop)
    assert again.status_code == 401 and "unknown or revoked token" in again.text
    assert http.delete("/api/v1/tokens").status_code == 401
    assert http.get("/api/v1/me", headers=other).status_code == 200
    assert login(http, "uma", OLD).status_code == 201  # the password is unchanged


def test_the_schema_documents_both_routes(sqlite_tracker):
    http, _ = sqlite_tracker
    paths = http.get("/openapi.json").json()["paths"]
    assert {"200", "401", "409", "422", "429"} <= set(
        paths["/api/v1/me/password"]["put"]["responses"]
    )
    assert "204" in paths["/api/v1/tokens"]["delete"]["responses"]


# -- the form ----------------------------------------------------------------------------------


def form(name: str, current: str, new: str, again: str | None = None) -> dict[str, str]:
    return {
        "name": name,
        "password": current,
        "new_password": new,
        "new_password_again": new if again is None else again,
    }


def test_the_form_changes_the_password_and_logs_out_everywhere(sqlite_tracker, join):
    http, _ = sqlite_tracker
    auth = join(http, "wren", password=OLD)
    assert 'href="/password"' in http.get("/add").text  # linked beside the other forms
    page = http.get("/password")
    assert page.status_code == 200 and 'name="new_password_again"' in page.text
    r = http.post("/password", data=form("wren", OLD, NEW))
    assert r.status_code == 200 and "Password changed" in r.text, r.text
    assert "Logged out everywhere (1 session ended)" in r.text
    assert OLD not in r.text and NEW not in r.text
    assert http.get("/api/v1/me", headers=auth).status_code == 401
    assert login(http, "wren", OLD).status_code == 401
    assert login(http, "wren", NEW).status_code == 201


def _error_at(page: str, field: str) -> str:
    """The problem shown above the input ``field`` (the input marks itself invalid)."""
    before, _, after = page.partition(f'<input id="{field}"')
    assert 'aria-invalid="true"' in after.split(">", 1)[0], f"{field} is not marked invalid"
    return before.rsplit('<span class="error"', 1)[1]


def test_the_form_shows_each_problem_at_its_field(sqlite_tracker, join):
    http, _ = sqlite_tracker
    join(http, "xena", password=OLD)
    r = http.post("/password", data=form("xena", OLD, NEW, again="new-password-3"))
    assert r.status_code == 422
    assert "expected the new password twice, got two different ones" in _error_at(
        r.text, "new_password_again"
    )
    r = http.post("/password", data=form("xena", OLD, "short"))
    assert "String should have at least 8 characters" in _error_at(r.text, "new_password")
    r = http.post("/password", data=form("xena", OLD, OLD))
    assert "different from the current one" in _error_at(r.text, "new_password")
    r = http.post("/password", data=form("<b>xena</b>", "wrong-pass", NEW))
    assert r.status_code == 401
    assert "wrong player name or password" in _error_at(r.text, "password")
    assert 'value="&lt;b&gt;xena&lt;/b&gt;"' in r.text and "<b>xena" not in r.text
    for typed in (OLD, NEW, "wrong-pass", "new-password-3"):
        assert typed not in r.text
    assert login(http, "xena", OLD).status_code == 201  # nothing was changed


def test_the_form_refuses_a_post_from_another_site(sqlite_url, clock, serve):
    app = create_app(sqlite_url, clock=clock, bind="127.0.0.1", registrations_per_address=0)
    try:
        with httpx.Client(base_url=serve(app).url, timeout=30) as http:
            body = {"name": "yara", "password": OLD, "timezone": "UTC"}
            assert http.post("/api/v1/players", json=body).status_code == 201
            evil = {"Origin": "https://evil.example"}
            r = http.post("/password", data=form("yara", OLD, NEW), headers=evil)
            assert r.status_code == 403
            assert login(http, "yara", OLD).status_code == 201
    finally:
        app.state.db.dispose()


def test_a_browser_changes_the_password_with_the_form(chromium, sqlite_tracker, join):
    """In chromium: a new password typed twice differently comes back tied to its field (the
    focus on it, nothing typed kept but the name); typed alike, it is changed."""
    http, _ = sqlite_tracker
    join(http, "zoe", password=OLD)
    page = chromium.new_page()
    page.goto(str(http.base_url) + "/add")
    page.click("text=Change your password")
    for field, value in (("name", "zoe"), ("password", OLD), ("new_password", NEW)):
        page.fill(f"#{field}", value)
    page.fill("#new_password_again", "new-password-3")
    page.click("button")
    assert page.title() == "Error: Change password - Morning Roll"
    assert page.evaluate("document.activeElement.id") == "new_password_again"
    described = page.get_attribute("#new_password_again", "aria-describedby")
    assert "two different ones" in page.locator(f"#{described}").inner_text()
    kept = [page.input_value(f"#{f}") for f in PASSWORD_FORM]
    assert kept == ["zoe", "", "", ""]
    for field, value in (("password", OLD), ("new_password", NEW), ("new_password_again", NEW)):
        page.fill(f"#{field}", value)
    page.click("button")
    assert page.title() == "Password changed - Morning Roll"
    assert login(http, "zoe", NEW).status_code == 201
