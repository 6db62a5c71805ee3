"""Two tabs on one turn once keeps can be taken back: a roll no longer tells one keep of it from
another, so a move names the turn's ``moves`` it was chosen on (``?moves=N``) and a turn moved
since (a keep taken back and another made in the other tab) refuses it with 409, unchanged."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dicecam_testing.page import kept_on_a_phone
from dicecam_testing.turns import turns_service


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> httpx.Client:
    with turns_service(tmp_path_factory.mktemp("data")) as srv:
        yield srv.client


def post(c: httpx.Client, url: str, **body: Any) -> httpx.Response:
    return c.post(url, json=body or None)


def kept_in_one_tab(c: httpx.Client) -> tuple[str, dict]:
    """A Morning Roll turn rolled 1 1 5 2 3 4 and kept 1 (what the other tab shows), then, in
    the first tab, that keep taken back and 1 1 5 kept instead."""
    turn_id = post(c, "/turns", player="ann", game="morning-roll").json()["id"]
    post(c, f"/turns/{turn_id}/rolls", values=[1, 1, 5, 2, 3, 4]).raise_for_status()
    seen = post(c, f"/turns/{turn_id}/keep", dice=[1]).json()
    assert seen["take_back"]["dice"] == [1]
    post(c, f"/turns/{turn_id}/undo?moves={seen['moves']}").raise_for_status()
    post(c, f"/turns/{turn_id}/keep", dice=[1, 1, 5]).raise_for_status()
    return turn_id, seen


@pytest.mark.parametrize("path", ["undo", "bank"])
def test_a_move_chosen_before_a_keep_was_taken_back_elsewhere_is_refused(service, path):
    turn_id, seen = kept_in_one_tab(service)
    now = service.get(f"/turns/{turn_id}").json()
    assert now["rolls"] == seen["rolls"] and now["moves"] == seen["moves"] + 2

    r = post(service, f"/turns/{turn_id}/{path}?rolls={seen['rolls']}&moves={seen['moves']}")
    assert r.status_code == 409, r.text
    detail = r.json()["detail"]
    assert "another tab or device" in detail and "nothing was changed" in detail
    assert f"{seen['moves']} moves" in detail and f"{now['moves']}" in detail
    assert service.get(f"/turns/{turn_id}").json() == now  # the keep of 1 1 5 still stands

    r = post(service, f"/turns/{turn_id}/{path}?rolls={now['rolls']}&moves={now['moves']}")
    assert r.status_code == 200, r.text  # as the turn is now: taken


def test_a_roll_sent_on_a_keep_taken_back_elsewhere_is_refused(service):
    turn_id, seen = kept_in_one_tab(service)
    now = service.get(f"/turns/{turn_id}").json()
    url = f"/turns/{turn_id}/rolls?rolls={seen['rolls']}&moves={seen['moves']}"
    r = post(service, url, values=[2, 3, 4])
    assert r.status_code == 409, r.text
    assert service.get(f"/turns/{turn_id}").json() == now


def test_a_photo_sent_on_a_keep_taken_back_elsewhere_is_refused_before_it_is_read(service):
    # The out-of-date view is said first (409), whatever the photo and its fields: the photo was
    # read before the moves were checked, so an unreadable one was a 415 and one sent with the
    # dice count of the view (expected_dice) a 422 about that count.
    turn_id, seen = kept_in_one_tab(service)
    now = service.get(f"/turns/{turn_id}").json()
    url = f"/turns/{turn_id}/rolls?rolls={seen['rolls']}&moves={seen['moves']}"
    photo = {"photo": ("roll.jpg", b"not a photo at all", "image/jpeg")}
    for data in ({}, {"expected_dice": "5"}):
        r = service.post(url, files=photo, data=data)
        assert r.status_code == 409, r.text
        assert "another tab or device" in r.json()["detail"]
    assert service.get(f"/turns/{turn_id}").json() == now


def test_moves_counts_every_move_and_a_bad_count_is_a_422(service):
    turn_id = post(service, "/turns", player="bo", game="morning-roll").json()["id"]
    assert service.get(f"/turns/{turn_id}").json()["moves"] == 0
    view = post(service, f"/turns/{turn_id}/rolls?moves=0", values=[1, 1, 5, 2, 3, 4]).json()
    assert view.pop("reading") is None and view["moves"] == 1  # a roll's answer adds its reading
    r = post(service, f"/turns/{turn_id}/keep?moves=-1", dice=[1])
    assert r.status_code == 422 and "moves" in r.text
    assert service.get(f"/turns/{turn_id}").json() == view


@pytest.mark.browser
def test_the_page_takes_back_only_the_keep_it_shows(chromium, tmp_path, serve):
    from playwright.sync_api import expect

    from service.app import create_app
    from service.settings import Settings

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    url = serve(app).url
    page, take_back = kept_on_a_phone(chromium, url)
    expect(page.get_by_role("button", name="Take back keep 1 1 5")).to_be_visible()
    turn_id = page.evaluate("window.dicecam.turn.id")

    with httpx.Client(base_url=url + "/api/v1") as other_tab:  # takes it back, keeps 1 1
        post(other_tab, f"/turns/{turn_id}/undo").raise_for_status()
        post(other_tab, f"/turns/{turn_id}/keep", dice=[1, 1]).raise_for_status()
        take_back.click()
        expect(page.locator("#message")).to_contain_text("moved on elsewhere")
        now = other_tab.get(f"/turns/{turn_id}").json()
    assert now["take_back"]["dice"] == [1, 1] and now["turn_points"] == 200
    expect(page.get_by_role("button", name="Take back keep 1 1")).to_be_visible()


@pytest.mark.parametrize("path", ["keep", "undo", "bank"])
def test_a_move_chosen_on_more_moves_than_the_turn_has_is_refused(service, path):
    # a view the turn never had (a move that another server's failed save undid): as stale as
    # one with fewer moves; a check of 'fewer' only let the move through
    turn_id = post(service, "/turns", player="cy", game="morning-roll").json()["id"]
    post(service, f"/turns/{turn_id}/rolls", values=[1, 1, 5, 2, 3, 4]).raise_for_status()
    post(service, f"/turns/{turn_id}/keep", dice=[1]).raise_for_status()
    now = service.get(f"/turns/{turn_id}").json()
    body = {"dice": [1]} if path == "keep" else {}
    r = post(service, f"/turns/{turn_id}/{path}?moves={now['moves'] + 1}", **body)
    assert r.status_code == 409, r.text
    assert f"expected a move after {now['moves'] + 1} moves" in r.json()["detail"]
    assert service.get(f"/turns/{turn_id}").json() == now
