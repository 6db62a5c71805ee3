"""Random sequences of moves against one real service, each answer checked against the scoring
package played alongside: Farkle-family turns (``/api/v1/turns``), Solitaire Dice sheets and
Low-High turns. Rolls are typed or read from a photo (a reader that reports the dice drawn),
keeps and splits legal or not; moves are sent twice, sent from a stale copy (``?rolls=N``),
games resumed by id, listed by ``/api/v1/open-games``, rebuilt from the database as a restart
rebuilds them, and abandoned for new ones. A refused move is a 4xx naming the problem and
changes nothing; no answer is a 500."""

from __future__ import annotations

from itertools import count
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from scoring import get_game

from dicecam_testing.game_models import FarkleModel, Game, LowHighModel, Move, SheetModel
from dicecam_testing.parity import FARKLE_RULES, rule_sets
from dicecam_testing.turns import dice, jpeg, turns_service

SETTINGS = settings(
    derandomize=True,
    database=None,
    max_examples=20,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
"""Deterministic and small: the three machines run in about 20 s on a slow 2-core machine."""

TURN_CHOICES = [
    (game, rules, on_board)
    for game, rules in FARKLE_RULES
    for on_board in (True, False)
    if on_board or get_game(game, **rules).entry_threshold > 0
]
"""Each Farkle-family game under each set of its house rules, on the board or not yet."""
PLAYERS = count(1)
SPECIAL_ROLLS = (
    [1, 2, 3, 4, 5, 6],
    [2, 2, 3, 3, 4, 4],
    [2, 2, 2, 2, 3, 3],
    [1, 1, 1, 1, 1, 1],
    [1, 1, 5, 5, 1, 5],
    [1, 2, 3, 4, 5],
    [2, 3, 4, 5, 6],
    [1, 1, 1, 1, 1],
    [5, 5, 5, 5, 5],
    [1, 5, 1, 5],
    [1, 1, 1],
    [5, 5],
    [1],
)
"""Straights, three pairs, four of a kind and a pair, five 1s, rolls of scoring dice only (hot
dice): rare at random, they force re-rolls, win games and roll over."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with turns_service(tmp_path_factory.mktemp("data")) as srv:
        yield srv


class Machine(RuleBasedStateMachine):
    """Plays one player's games of one kind on :attr:`server` (set by the test), the model of
    each beside it; the rules every kind shares."""

    server: ClassVar[Any] = None
    route: ClassVar[str]
    ops: ClassVar[tuple[str, ...]]

    def __init__(self) -> None:
        super().__init__()
        self.player = f"player {next(PLAYERS)}"
        self.games: list[Any] = []
        self.last: Move | None = None

    @property
    def game(self) -> Any:
        return self.games[-1]

    def started(self, model: Game, body: dict[str, Any]) -> None:
        r = self.server.client.post(self.route, json={"player": self.player, **body})
        assert r.status_code == 201, r.text
        model.id = r.json()["id"]
        self.games.append(model)
        self.last = None
        model.check(r.json())

    def send(self, move: Move) -> None:
        """Send ``move`` on the current game; check the answer and the game against the model."""
        model = self.game
        if move.seen is None or move.seen == len(model.rolls):
            self.last = move  # a move as the page sends it, to send again
        url = f"{self.route}/{model.id}/{move.op}"
        params = {} if move.seen is None else {"rolls": move.seen}
        if move.photo is not None:
            self.server.reader.rolls[:] = [dice(*move.photo)]
            photo = {"photo": ("roll.jpg", jpeg(720), "image/jpeg")}
            form = {k: str(v).strip("[]") for k, v in (move.body or {}).items()}
            r = self.server.client.post(url, params=params, files=photo, data=form)
            self.server.reader.rolls.clear()  # a move refused before its photo was read
        else:
            r = self.server.client.post(url, params=params, json=move.body)
        refused = model.refusal(move)
        assert r.status_code < 500, r.text
        if refused is None:
            assert r.status_code == 200, (move, r.text)
            model.check(r.json())
        else:
            assert r.status_code == refused[0], (move, refused, r.text)
            assert refused[1] in r.json()["detail"], (move, refused, r.text)
            model.check(self.get(model))  # nothing changed

    def get(self, model: Game) -> dict[str, Any]:
        r = self.server.client.get(f"{self.route}/{model.id}")
        assert r.status_code == 200, r.text
        return r.json()

    def seen(self, data: st.DataObject) -> int | None:
        return len(self.game.rolls) if data.draw(st.booleans(), label="?rolls") else None

    @precondition(lambda self: self.game.rolls_now)
    @rule(data=st.data())
    def roll(self, data: st.DataObject) -> None:
        """The dice left, typed or in a photo, when the game waits for a roll (:meth:`odd_roll`
        rolls when it does not)."""
        n = self.game.dice_left
        values = st.lists(st.integers(1, 6), min_size=n, max_size=n)
        special = [r for r in SPECIAL_ROLLS if len(r) == n]
        if special:
            values = st.one_of(values, st.sampled_from(special).flatmap(st.permutations))
        values = data.draw(values, label="values")
        self.send_roll(values, 0, data.draw(st.booleans(), label="photo"), data)

    @precondition(lambda self: not self.game.over)
    @rule(data=st.data())
    def advance(self, data: st.DataObject) -> None:
        """The game's next move played legally (a roll of the dice left, a legal keep or split),
        so that games go deeper than refusals let them."""
        if self.game.rolls_now:
            self.roll(data)
        else:
            self.legal_move(data)

    def legal_move(self, data: st.DataObject) -> None:
        """A legal keep or split of the last roll (subclasses)."""
        raise NotImplementedError

    @rule(data=st.data())
    def odd_roll(self, data: st.DataObject) -> None:
        """A roll with dice off the table or missing from its photo, or a die too many or too
        few."""
        photo = data.draw(st.booleans(), label="photo")
        off = data.draw(st.integers(0, 2), label="off table")
        missing = data.draw(st.integers(0, 2), label="missing") if photo else 0
        wrong = data.draw(st.sampled_from([0, -1, 1]), label="wrong count")
        n = max(0 if photo else 1, self.game.dice_left - off - missing + wrong)
        values = data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n), label="values")
        corrections = photo and (values or off)  # none at all: the photo's reading is used
        if corrections and data.draw(st.booleans(), label="corrected"):  # read otherwise
            read = data.draw(st.lists(st.integers(1, 6), max_size=n + 1), label="read")
            body = {"values": values, "off_table": off}
            self.send(Move("rolls", body, photo=(read, 0), seen=self.seen(data)))
            return
        self.send_roll(values, off, photo, data)

    def send_roll(self, values: list[int], off: int, photo: bool, data: st.DataObject) -> None:
        seen = self.seen(data)
        if photo:
            self.send(Move("rolls", photo=(values, off), seen=seen))
        else:
            self.send(Move("rolls", {"values": values, "off_table": off}, seen=seen))

    @rule(data=st.data())
    def again(self, data: st.DataObject) -> None:
        """A move sent again: the last one as it was (a double tap, an answer lost on the way),
        or one chosen on a stale copy of the game (fewer or more rolls than it has)."""
        if self.last is not None and data.draw(st.booleans(), label="the last move"):
            self.send(self.last)
            return
        rolls = len(self.game.rolls)
        seen = data.draw(st.sampled_from([rolls + 1, max(rolls - 1, 0), 0]), label="stale")
        if seen != rolls:
            op = data.draw(st.sampled_from(self.ops), label="op")
            n = max(1, self.game.dice_left)
            body = {"values": [1] * n} if op == "rolls" else self.a_move(op)
            self.send(Move(op, body, seen=seen))

    def a_move(self, op: str) -> dict[str, Any] | None:
        """A plausible body for ``op`` (subclasses)."""
        return None

    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        """A game read by its id as a reloaded page (or another device) reads it, with the
        player's open games (every game not over, each as it stands); or rebuilt from the
        database as a restarted service rebuilds it."""
        model = data.draw(st.sampled_from(self.games), label="game")
        if data.draw(st.booleans(), label="from the database"):
            store = self.store()
            rows = store.database.load(
                lambda row, *photos: store._restore(row, *photos) if row.id == model.id else None,
                since=0,
            )
            restored = [s for s in rows if s is not None]
            assert len(restored) == 1, (model.id, rows)
            model.check(restored[0].to_dict())
            return
        model.check(self.get(model))
        r = self.server.client.get("/open-games", params={"player": self.player})
        assert r.status_code == 200, r.text
        listed = {g["id"]: g for g in r.json()["games"]}
        assert set(listed) == {g.id for g in self.games if not g.over}
        for g in self.games:
            if not g.over:
                row = listed[g.id]
                want = (len(g.rolls), g.dice_left, g.score)
                assert (row["rolls"], row["dice_left"], row["score"]) == want
                assert row["url"] == f"/api/v1{self.route}/{g.id}"
                assert row["awaiting"] == self.get(g)["awaiting"]


class FarkleTurns(Machine):
    route, ops = "/turns", ("rolls", "keep", "bank")

    def store(self) -> Any:
        return self.server.app.state.turns

    def start(self, game: str, rules: dict[str, Any], on_board: bool) -> None:
        model = FarkleModel("", game=game, rules=rules, on_board=on_board)
        self.started(model, {"game": game, "rules": rules, "on_board": on_board})

    @initialize(choice=st.sampled_from(TURN_CHOICES))
    def first(self, choice: tuple[str, dict[str, Any], bool]) -> None:
        self.start(*choice)

    @precondition(lambda self: self.game.rolls)
    @rule(choice=st.sampled_from(TURN_CHOICES))
    def abandon(self, choice: tuple[str, dict[str, Any], bool]) -> None:
        """A new turn over the open one: the old one is left as it stands, still listed."""
        self.start(*choice)

    def a_move(self, op: str) -> dict[str, Any] | None:
        keeps = self.game.turn.keeps
        return {"dice": list(keeps[0].dice) if keeps else [1]} if op == "keep" else None

    def legal_move(self, data: st.DataObject) -> None:
        self.keep(data)

    @precondition(lambda self: self.game.turn.keeps)
    @rule(data=st.data())
    def keep(self, data: st.DataObject) -> None:
        """A legal keep of the last roll, with or without its ``forced_reroll``."""
        k = data.draw(st.sampled_from(self.game.turn.keeps), label="keep")
        body = {"dice": list(k.dice), "forced_reroll": k.forced_reroll}
        if data.draw(st.booleans(), label="without forced_reroll"):
            body.pop("forced_reroll")
        self.send(Move("keep", body, seen=self.seen(data)))

    @rule(data=st.data())
    def odd_keep(self, data: st.DataObject) -> None:
        """Dice at random (mostly an illegal keep; 0 and 7 too)."""
        dice = data.draw(st.lists(st.integers(0, 7), min_size=1, max_size=7), label="dice")
        forced = data.draw(st.sampled_from([None, True, False]), label="forced_reroll")
        self.send(Move("keep", {"dice": dice, "forced_reroll": forced}, seen=self.seen(data)))

    @rule(data=st.data())
    def bank(self, data: st.DataObject) -> None:
        self.send(Move("bank", seen=self.seen(data)))


class SheetStoreMixin:
    def store(self) -> Any:
        return self.server.app.state.sheets


class SolitaireSheets(SheetStoreMixin, Machine):
    route, ops = "/sheets", ("rolls", "split")

    @initialize()
    def first(self) -> None:
        self.abandon()

    @precondition(lambda self: self.game.rolls)
    @rule()
    def abandon(self) -> None:
        self.started(SheetModel(""), {})

    def a_move(self, op: str) -> dict[str, Any] | None:
        return {"reject": 1, "combos": [2, 12]}

    def legal_move(self, data: st.DataObject) -> None:
        self.split(data)

    @precondition(lambda self: self.game.awaiting == "split")
    @rule(data=st.data())
    def split(self, data: st.DataObject) -> None:
        """A legal split of the last roll (its combos in either order)."""
        sheet = self.game
        o = data.draw(st.sampled_from(sheet.sheet.options(sheet.rolls[-1])), label="split")
        combos = o["combos"][:: data.draw(st.sampled_from([1, -1]), label="order")]
        self.send(Move("split", {"reject": o["reject"], "combos": combos}, seen=self.seen(data)))

    @rule(data=st.data())
    def odd_split(self, data: st.DataObject) -> None:
        """A reject and two sums at random (mostly not legal)."""
        reject = data.draw(st.one_of(st.none(), st.integers(1, 6)), label="reject")
        combos = data.draw(st.lists(st.integers(1, 13), min_size=2, max_size=2), label="sums")
        body = {"reject": reject, "combos": combos}
        self.send(Move("split", body, seen=self.seen(data)))


class LowHighTurns(SheetStoreMixin, Machine):
    route, ops = "/low-high/turns", ("rolls", "keep", "end")

    @initialize(rules=st.sampled_from(rule_sets("low-high")))
    def first(self, rules: dict[str, Any]) -> None:
        self.abandon(rules)

    @precondition(lambda self: self.game.rolls)
    @rule(rules=st.sampled_from(rule_sets("low-high")))
    def abandon(self, rules: dict[str, Any]) -> None:
        self.started(LowHighModel("", rules=rules), {"rules": rules})

    def a_move(self, op: str) -> dict[str, Any] | None:
        return {"face": 6} if op == "keep" else None

    def legal_move(self, data: st.DataObject) -> None:
        self.keep(data)

    @precondition(lambda self: self.game.sets)
    @rule(data=st.data())
    def keep(self, data: st.DataObject) -> None:
        face = data.draw(st.sampled_from([s["face"] for s in self.game.sets]), label="face")
        self.send(Move("keep", {"face": face}, seen=self.seen(data)))

    @rule(data=st.data())
    def odd_keep(self, data: st.DataObject) -> None:
        face = data.draw(st.integers(1, 6), label="face")
        self.send(Move("keep", {"face": face}, seen=self.seen(data)))

    @rule(data=st.data())
    def end(self, data: st.DataObject) -> None:
        self.send(Move("end", seen=self.seen(data)))


@pytest.mark.parametrize("machine", [FarkleTurns, SolitaireSheets, LowHighTurns])
def test_random_moves_agree_with_the_scoring_package(server, machine):
    machine.server = server
    run_state_machine_as_test(machine, settings=SETTINGS)
