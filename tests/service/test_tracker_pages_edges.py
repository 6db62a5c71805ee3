"""Edges of the tracker's pages over a real tracker: the leaderboard counts a turn's rolls
only when it has camera evidence."""

from __future__ import annotations

import re


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
