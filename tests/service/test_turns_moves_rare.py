"""Moves on a turn against a real service that the random sequences of test_turns_stateful
seldom make: a keep made while the roll's photo is read (another tab) leaves that roll refused,
and a roll of every die off the table, typed or a photo's correction, is a roll."""

from __future__ import annotations

import threading

import httpx
import pytest

from scoring import get_game
from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader, dice, jpeg, turns_service


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with turns_service(tmp_path_factory.mktemp("data")) as srv:
        yield srv


class HeldReader(QueueReader):
    """A :class:`QueueReader` that holds each photo until :attr:`release` is set (another move
    lands meanwhile); :attr:`reading` is set once a photo is being read."""

    def __init__(self) -> None:
        super().__init__()
        self.reading, self.release = threading.Event(), threading.Event()

    def read(self, image, expected_dice=None):
        self.reading.set()
        assert self.release.wait(20), "the test never released the photo"
        return super().read(image, expected_dice)


@pytest.mark.parametrize(
    ("route", "first", "keep", "shown"),
    [
        ("/turns", [1, 2, 3, 4, 6, 6], {"dice": [1]}, [2, 3, 4, 6]),  # read for 6, 5 to roll
        ("/low-high/turns", [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6], {"face": 1}, [2] * 9),
    ],
)
def test_a_keep_made_while_a_rolls_photo_is_read_leaves_the_roll_refused(
    tmp_path, route, first, keep, shown
):
    # the photo was read for the dice to roll before the keep (a keep from another tab): its
    # missing dice were counted against them and the roll answered 500 (ValueError), or for a
    # Low-High turn "1 die missing: the photo shows 9 of the 10 dice rolled" of 13
    reader = HeldReader()
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url + "/api/v1", timeout=30) as c:
        game = c.post(route, json={"player": "ann"}).json()
        url = f"{route}/{game['id']}"
        game = c.post(f"{url}/rolls", json={"values": first}).json()
        reader.rolls.append(dice(shown))
        answers: list[httpx.Response] = []
        photo = {"photo": ("roll.jpg", jpeg(720), "image/jpeg")}
        rolling = threading.Thread(
            target=lambda: answers.append(c.post(f"{url}/rolls?rolls=1", files=photo))
        )
        rolling.start()
        assert reader.reading.wait(20)
        kept = c.post(f"{url}/keep", json=keep)
        assert kept.status_code == 200, kept.text
        reader.release.set()
        rolling.join(20)
        r = answers[0]
        assert r.status_code == 409, r.text
        assert "moved on while the photo was read" in r.json()["detail"], r.text
        assert c.get(url).json() == kept.json()  # nothing changed


def test_every_die_off_the_table_is_a_roll_typed_or_corrected(server):
    # "values" left empty beside off_table (the page's corrections when every die left the
    # table) was taken for no values: the photo's reading was used and the off_table dropped
    c = server.client
    for game, status, said in (
        ("morning-roll", 200, "6 dice left the table"),
        ("farkle-five", 422, "5 dice left the table: roll again"),
    ):
        n = get_game(game).n_dice
        for typed in (True, False):
            turn = c.post("/turns", json={"player": "zoe", "game": game}).json()
            url = f"/turns/{turn['id']}/rolls"
            if typed:
                r = c.post(url, json={"values": [], "off_table": n})
            else:
                server.reader.rolls[:] = [dice([])]  # the reader saw none of them
                photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}
                r = c.post(url, files=photo, data={"values": "", "off_table": str(n)})
                server.reader.rolls.clear()
            assert r.status_code == status, (game, typed, r.text)
            if status == 200:
                assert r.json()["bust_reason"] == said
                assert r.json()["last_roll"]["off_table"] == n
                assert r.json()["last_roll"]["missing"] == 0
            else:
                assert said in r.json()["detail"]
        r = c.post(url, json={"values": [], "off_table": 0})
        assert r.status_code == 422 and "non-empty list" in r.json()["detail"], r.text
        for score in (
            c.post(f"/score?game={game}", json={"values": [], "off_table": 1}),
            c.post(f"/score?game={game}", json={"values": [1, 5], "off_table": 1}),
        ):
            assert score.status_code < 500, score.text


def test_a_photo_roll_sent_before_another_tabs_roll_and_keep_is_refused_unchanged(tmp_path):
    # while the photo was read (for six dice), another tab rolled a straight and kept it: six
    # dice to roll again, so only the turn's rolls tell the photo is of the roll before
    reader = HeldReader()
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url + "/api/v1", timeout=30) as c:
        url = "/turns/" + c.post("/turns", json={"player": "ann"}).json()["id"]
        reader.rolls.append(dice([5, 2, 2, 3, 4, 6]))
        answers: list[httpx.Response] = []
        photo = {"photo": ("roll.jpg", jpeg(720), "image/jpeg")}
        rolling = threading.Thread(
            target=lambda: answers.append(c.post(f"{url}/rolls?rolls=0&moves=0", files=photo))
        )
        rolling.start()
        assert reader.reading.wait(20)
        c.post(f"{url}/rolls", json={"values": [1, 2, 3, 4, 5, 6]}).raise_for_status()
        kept = c.post(f"{url}/keep", json={"dice": [1, 2, 3, 4, 5, 6]})
        assert kept.status_code == 200 and kept.json()["dice_left"] == 6, kept.text
        reader.release.set()
        rolling.join(20)
        r = answers[0]
        assert r.status_code == 409, r.text
        assert "expected a move after roll 0, the turn has had 1" in r.json()["detail"]
        assert c.get(url).json() == kept.json()  # the straight's keep stands, no roll added


def test_a_bank_that_waited_for_the_turn_while_it_rolled_on_is_refused(tmp_path):
    # the bank passed the check of ?rolls= and waited for the turn's lock while another move
    # (here a roll and its keep, made under the lock) went on: checked again under the lock, it
    # is refused, not banked on a roll the player never saw
    with turns_service(tmp_path) as srv:
        c = srv.client
        url = "/turns/" + c.post("/turns", json={"player": "ann"}).json()["id"]
        c.post(f"{url}/rolls", json={"values": [1, 2, 3, 4, 6, 6]}).raise_for_status()
        seen = c.post(f"{url}/keep", json={"dice": [1]}).json()
        session = srv.app.state.turns.get(seen["id"])
        answers: list[httpx.Response] = []
        with session.lock:
            banking = threading.Thread(
                target=lambda: answers.append(
                    c.post(f"{url}/bank?rolls={seen['rolls']}&moves={seen['moves']}")
                )
            )
            banking.start()
            banking.join(1.0)  # the bank waits for the lock
            assert not answers
            session.roll([5, 2, 3, 3, 4])
            session.keep([5])
        banking.join(20)
        assert answers[0].status_code == 409, answers[0].text
        assert "expected a move after roll 1, the turn has had 2" in answers[0].json()["detail"]
        now = c.get(url).json()
        assert now["over"] is False and now["turn_points"] == 150  # nothing banked
