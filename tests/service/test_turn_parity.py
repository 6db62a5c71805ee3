"""A turn played through ``/api/v1/turns`` offers the keeps, points and advice of the scoring
package and of ``POST /api/v1/score``, under each house rule of the Farkle family."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest

from scoring import FarkleGame, get_advisor, get_game

from dicecam_testing.parity import FARKLE_RULES, assert_keeps_ranked, http_score, scoring_api


@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    with scoring_api() as client:
        yield client


# --- a turn played through /api/v1/turns ---------------------------------------------------------
FIRST_ROLLS = {
    "morning-roll": (
        [1, 2, 3, 4, 5, 6],
        [2, 2, 3, 3, 4, 4],
        [2, 2, 2, 2, 3, 3],
        [2, 3, 3, 4, 6, 6],
    ),
    "farkle-five": ([1, 1, 1, 1, 1], [1, 2, 3, 4, 5], [5, 5, 2, 3, 4], [2, 3, 4, 6, 6]),
    "greed": ([1, 1, 1, 1, 1], [1, 2, 3, 4, 5], [5, 5, 5, 5, 5], [2, 2, 3, 4, 6]),
}
"""Straights, three pairs, four of a kind and a pair, five 1s, a bust: forced re-rolls, wins."""


@pytest.mark.parametrize(("game", "rules"), FARKLE_RULES, ids=lambda v: str(v))
def test_a_turn_offers_and_scores_what_the_package_and_the_score_route_say(api, game, rules):
    from scoring import FarkleTurn

    rules_obj = get_game(game, **rules)
    advisor = get_advisor(game, **rules)
    rng = random.Random(f"turn {game}{rules}")
    seen: set[str] = set()
    for first in [*FIRST_ROLLS[game], None, None, None, None]:
        view = api.post("/turns", json={"player": "ann", "game": game, "rules": rules}).json()
        ref = FarkleTurn(rules_obj)  # the package's turn, played alongside
        roll = first
        while not view["over"]:
            roll = roll or [rng.randint(1, 6) for _ in range(view["dice_left"])]
            where = (game, rules, ref.rolls, roll)
            banked = ref.turn_points
            view = api.post(f"/turns/{view['id']}/rolls", json={"values": roll}).json()
            ref.roll(roll)
            scored = http_score(api, game, roll, rules, banked=banked)
            assert view["bust"] == scored["bust"] == (ref.state == "bust"), where
            if ref.state == "bust":
                assert view["keeps"] == [] and view["turn_points"] == 0, where
                seen.add("bust")
                break
            options = advisor.advise(roll, banked)
            assert_keeps_ranked(view["keeps"], rules_obj, roll, options, where)
            assert view["keeps"] == scored["keeps"], where
            pick = view["keeps"][0] if roll == first else rng.choice(view["keeps"][:3])
            body = {"dice": pick["dice"], "forced_reroll": pick["forced_reroll"]}
            view = api.post(f"/turns/{view['id']}/keep", json=body).json()
            chosen = ref.keep(pick["dice"], forced_reroll=pick["forced_reroll"])
            assert chosen.points == pick["points"], where
            for field in ("turn_points", "dice_left", "must_roll", "hot_dice"):
                assert view[field] == getattr(ref, field), (where, field)
            assert view["forced_reroll"] == chosen.forced_reroll, where
            assert view["over"] == (ref.state == "banked"), where  # five 1s win (F4)
            seen |= {n for n in ("forced_reroll", "wins_game") if getattr(chosen, n)}
            seen |= {"must_roll"} if ref.must_roll else set()
            if view["over"] or ref.must_roll:
                if not view["over"]:  # a forced re-roll, a total ending in 50 (F2)
                    refused = api.post(f"/turns/{view['id']}/bank")
                    assert refused.status_code == 409, (where, refused.text)
                roll = None
                continue
            if pick["then"] == "bank" or rng.random() < 0.2:
                view = api.post(f"/turns/{view['id']}/bank").json()
                assert view["outcome"] == "banked" and view["turn_points"] == ref.bank(), where
                seen.add("banked")
            roll = None
    wanted = {"bust", "banked"} | {
        "morning-roll": {"forced_reroll", "must_roll"},
        "farkle-five": {"wins_game", "must_roll"},
        "greed": set(),
    }[game]
    assert wanted <= seen, seen


def test_a_die_off_the_table_busts_alike_with_nothing_to_keep(api):
    """M8: the score route offered the keeps of a roll it called a bust (the page listed
    'Keep 1 5 · 150 pts' under 'Bust: a die left the table'); a turn offers none."""
    from scoring import FarkleTurn

    ref = FarkleTurn(get_game("morning-roll"))
    ref.roll([1, 5, 5, 2, 3], off_table=1)
    scored = api.post(
        "/score", params={"game": "morning-roll"}, json={"values": [1, 5, 5, 2, 3], "off_table": 1}
    ).json()
    turn = api.post("/turns", json={"player": "ann"}).json()
    turn = api.post(
        f"/turns/{turn['id']}/rolls", json={"values": [1, 5, 5, 2, 3], "off_table": 1}
    ).json()
    assert ref.state == "bust" and ref.keeps == []
    assert scored["bust"] and turn["bust"] and "table" in scored["bust_reason"]
    assert scored["keeps"] == scored["advice"] == turn["keeps"] == []


@pytest.mark.parametrize(
    ("game", "roll", "keep", "points"),
    [("farkle-five", [1, 1, 2, 3, 4], [1, 1], 200), ("greed", [1, 1, 2, 3, 5], [1, 1, 5], 250)],
)
def test_a_turn_before_the_entry_score_is_advised_and_scored_as_the_package_says(
    api, game, roll, keep, points
):
    """F7, G3: a player not yet on the board banks nothing below the entry score; the turn
    was advised as if they were on it (bank the points rather than roll on)."""
    off, on = get_advisor(game, on_board=False), get_advisor(game)
    view = api.post("/turns", json={"player": "ann", "game": game, "on_board": False}).json()
    assert view["on_board"] is False and view["scored"] is None
    view = api.post(f"/turns/{view['id']}/rolls", json={"values": roll}).json()
    assert_keeps_ranked(view["keeps"], get_game(game), roll, off.advise(roll, 0), (game, roll))
    assert view["keeps"][0]["then"] == "roll"  # below the entry score a bank is worth nothing
    assert on.advise(roll, 0)[0].then == "bank"  # ... where a player on the board banks
    view = api.post(f"/turns/{view['id']}/keep", json={"dice": keep}).json()
    view = api.post(f"/turns/{view['id']}/bank").json()
    assert (view["outcome"], view["turn_points"], view["scored"]) == ("banked", points, 0)

    on_board = api.post("/turns", json={"player": "ann", "game": game}).json()
    on_board = api.post(f"/turns/{on_board['id']}/rolls", json={"values": roll}).json()
    on_board = api.post(f"/turns/{on_board['id']}/keep", json={"dice": keep}).json()
    on_board = api.post(f"/turns/{on_board['id']}/bank").json()
    assert (on_board["on_board"], on_board["scored"]) == (True, points)


@pytest.mark.parametrize(
    ("game", "roll", "keep", "entry"),
    [("farkle-five", [2, 3, 5, 5, 5], [5, 5, 5], 500), ("greed", [2, 3, 3, 3, 4], [3, 3, 3], 300)],
)
def test_a_turn_of_exactly_the_entry_score_counts_before_the_player_is_on_board(
    api, game, roll, keep, entry
):
    """F7, G3: a first turn that reaches the entry score exactly puts the player on the
    board, so it scores its points (as scoring.FarkleGame credits it)."""
    view = api.post("/turns", json={"player": "ann", "game": game, "on_board": False}).json()
    view = api.post(f"/turns/{view['id']}/rolls", json={"values": roll}).json()
    view = api.post(f"/turns/{view['id']}/keep", json={"dice": keep}).json()
    view = api.post(f"/turns/{view['id']}/bank").json()
    assert (view["outcome"], view["turn_points"], view["scored"]) == ("banked", entry, entry)
    assert FarkleGame(get_game(game), ["ann"]).record(entry) == entry


def test_morning_roll_has_no_entry_score_to_be_below():
    from service.turn_store import TurnStore
    from service.turns import TurnError

    with pytest.raises(TurnError, match="expected on_board true for morning-roll"):
        TurnStore().start("ann", "morning-roll", on_board=False)


def test_a_turn_keeps_being_below_the_entry_score_after_a_restart(tmp_path):
    from service.turn_db import TurnDatabase
    from service.turn_store import TurnStore

    def store() -> TurnStore:
        return TurnStore(database=TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "photos"))

    first = store()
    turn = first.start("ann", "farkle-five", on_board=False)
    turn.roll([1, 1, 2, 3, 4])
    first.save(turn)
    first.database.dispose()
    again = store().get(turn.id)
    assert again.on_board is False
    assert again.options()[0]["then"] == "roll" and again.to_dict()["on_board"] is False
