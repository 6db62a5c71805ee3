"""Edges of the site's forms over a real tracker: a refusal from the store is tied to the input
it is about."""

from __future__ import annotations

import re


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
