"""A turn's roll read from a photo with a cocked die (leaning, no clear top face) is refused:
the player re-rolls it, as the usual house rule says, or types the values; the turn is kept as
it was."""

from __future__ import annotations

from dataclasses import replace

from dicecam_testing.turns import dice, jpeg, turns_service


def test_a_photo_with_a_cocked_die_is_refused_and_the_turn_waits(tmp_path):
    with turns_service(tmp_path) as srv:
        c = srv.client
        turn = c.post("/turns", json={"player": "ann"}).json()
        leaning = dice([1, 5, 2, 3, 4, 6])
        leaning[2] = replace(leaning[2], cocked=True)
        srv.reader.rolls.append(leaning)
        r = c.post(f"/turns/{turn['id']}/rolls", files={"photo": ("roll.jpg", jpeg())})
        assert r.status_code == 422, r.text
        assert r.json()["detail"] == (
            "1 die leans (cocked) with no clear top face: re-roll it, or correct the values by hand"
        )
        kept = c.get(f"/turns/{turn['id']}").json()
        assert (kept["rolls"], kept["awaiting"], kept["dice_left"]) == (0, "roll", 6)

        srv.reader.rolls.append(dice([1, 5, 2, 3, 4, 6]))  # re-rolled flat
        r = c.post(f"/turns/{turn['id']}/rolls", files={"photo": ("roll.jpg", jpeg())})
        assert r.status_code == 200, r.text
        assert r.json()["last_roll"]["values"] == [1, 5, 2, 3, 4, 6]
