"""Edges of the tracker's pages over a real tracker: the leaderboard counts a turn's rolls
only when it has camera evidence; a turn's page shows each roll's photo or says it has none, its
reading, the comment, or that the score was entered by hand; only the current round's page follows
a browser whose day is in another year."""

from __future__ import annotations

import base64
import re

import cv2
import numpy as np


def row_of(html: str, name: str) -> str:
    """The leaderboard row of ``name``."""
    rows = re.findall(r"<tr>.*?</tr>", html, flags=re.S)
    return next(r for r in rows if f">{name}</a>" in r)


def test_the_leaderboard_counts_rolls_only_of_a_turn_with_evidence(sqlite_tracker, join, turn):
    http, clock = sqlite_tracker
    for name, rolls in [
        ("kenny", [{"values": [1, 2, 2, 3, 5, 6]}, {"values": [1]}]),
        ("molly", []),
    ]:
        auth = join(http, name)
        r = http.post("/api/v1/turns", json=turn(name, 150, rolls=rolls), headers=auth)
        assert r.status_code == 201, r.text
    html = http.get("/").text
    assert "(2 rolls)</span>" in row_of(html, "kenny")
    assert "roll" not in row_of(html, "molly").split("150</a>")[-1]  # by hand: no count


def jpeg() -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((8, 8, 3), 200, np.uint8))
    assert ok
    return buf.tobytes()


def test_a_turns_page_shows_each_rolls_evidence_and_the_comment(sqlite_tracker, join, turn):
    """A roll with a photo shows it; one without says so, and has no reading to open; the
    comment is quoted; 'entered by hand' only for a turn without rolls."""
    http, _ = sqlite_tracker
    auth = join(http, "kenny")
    rolls = [
        {"values": [1, 2, 2, 3, 5, 6], "photo_jpeg_b64": base64.b64encode(jpeg()).decode()},
        {"values": [5, 5], "reading": {"dice": [{"value": 5}]}},
    ]
    body = turn("kenny", 200, rolls=rolls, comment="two <fives>")
    stored = http.post("/api/v1/turns", json=body, headers=auth).json()
    html = http.get(f"/turns/{stored['id']}").text
    assert "<blockquote>two &lt;fives&gt;</blockquote>" in html
    assert "entered by hand" not in html
    first, second = html.split('<div class="roll">')[1:]
    assert first.startswith("<h2>Roll 1: 1, 2, 2, 3, 5, 6</h2>")
    assert f'src="/api/v1/turns/{stored["id"]}/rolls/0/photo.jpg"' in first
    assert "<details>" not in first  # no reading sent
    assert second.startswith("<h2>Roll 2: 5, 5</h2>")
    assert '<p class="muted">no photo</p>' in second and "<img" not in second
    assert "<summary>Reading of roll 2</summary>" in second
    clock_turn = http.post("/api/v1/turns", json=turn("molly", 0), headers=join(http, "molly"))
    html = http.get(f"/turns/{clock_turn.json()['id']}").text
    assert "No camera evidence: the score was entered by hand." in html
    assert "<blockquote>" not in html and '<div class="roll">' not in html


def test_only_the_current_rounds_page_follows_the_browsers_year(sqlite_tracker):
    """The page of the round under way takes a browser whose day is in another year to that
    round (``data-round``); a past round's page stays where it was asked for."""
    http, clock = sqlite_tracker
    clock.set("2026-12-31T12:00:00+00:00")
    assert 'data-round="2026" data-rounds="/rounds/"' in http.get("/").text
    for year in (2025, 2026):
        page = http.get(f"/rounds/{year}").text
        assert 'id="game"' in page and "data-round=" not in page
