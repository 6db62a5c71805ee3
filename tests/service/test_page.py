"""The camera page in Debian's chromium (Playwright), its fake camera fed a video of a roll.

The page's mechanics run on a roll drawn with OpenCV and a reader that reports its exact labels
(the frames are still decoded for real): live mode settles and takes the roll with no button
press, boxes and values are drawn, keeps are ranked with expected values, a tap corrects a die,
a die off the table is marked red and busts the turn, banking shows the total.
``test_page_e2e.py`` plays with the real reader and the shipped model on a synthetic or sample
photo.
"""

from __future__ import annotations

import pytest

from service.app import create_app
from service.settings import Settings
from vision import Die, Reading

from dicecam_testing.page import (
    DrawnRoll,
    TruthReader,
    canvas_point,
    chips,
    chromium_or_skip,
    launch,
    open_turn,
    photo,
    pixel,
    read_requests,
    truth_dice,
    wait_on_page,
    write_y4m,
)
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_play_a_turn_on_the_page_with_live_camera_correction_and_bank(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    truth = sorted(truth_dice(sample), key=lambda d: d.box[0])
    reader = TruthReader(truth)
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        reads = read_requests(page)
        page.goto(server.url + "/")
        page.fill("#player", "heather")
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#message")).to_contain_text("roll 6 dice")

        # live mode: the roll is taken once the same values came in several frames
        page.check("#live")
        expect(page.locator("#turn-state")).to_have_attribute(
            "data-state", "awaiting_keep", timeout=20_000
        )
        assert len(reads) >= 3  # several identical frames before the roll is taken
        assert chips(page) == [str(d.value) for d in truth]
        expect(page.locator("#photo")).to_be_visible()
        x1, y1, x2, y2 = truth[0].box
        assert pixel(page, x1, (y1 + y2) / 2) == [34, 197, 94]  # its box, drawn in green
        keeps = page.locator("#keeps li button")
        expect(keeps.first).to_contain_text("expect")
        evs = [float(t.split("expect ")[1].split()[0]) for t in keeps.all_inner_texts()]
        assert evs == sorted(evs, reverse=True) and len(evs) >= 2
        page.uncheck("#live")

        best = keeps.first.inner_text()
        kept = [int(v) for v in best.split("\n")[0].removeprefix("Keep ").split()]
        keeps.first.click()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        left = 6 - len(kept)
        expect(page.locator("#dice-left")).to_have_text(str(left))
        total = int(page.inner_text("#turn-total"))
        assert total > 0

        # a photo from the gallery, read with one die wrong: tap it and correct it
        misread = [
            Die(v, d.box, 0.6) for v, d in zip([3, 2, 4, 6, 2, 6][:left], truth[:left], strict=True)
        ]
        reader.script.append(misread)
        page.set_input_files(
            "#file",
            files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, 90)}],
        )
        expect(page.locator("#dice .die")).to_have_count(left)
        page.mouse.click(*canvas_point(page, misread[0].box))
        page.click("#picker button[value='1']")
        expect(page.locator("#dice .die.corrected")).to_have_text("1")
        page.click("#use-roll")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        expect(page.locator("#use-roll")).to_be_disabled()  # used: not sent again as a next roll
        expect(page.locator("#keeps li button")).to_have_count(1)  # only the corrected 1 scores
        expect(page.locator("#keeps li button").first).to_contain_text("Keep 1")
        page.locator("#keeps li button").first.click()
        expect(page.locator("#turn-total")).to_have_text(str(total + 100))
        expect(page.locator("#bank")).to_be_enabled()
        page.dblclick("#bank")  # a double tap banks once, and its receipt stays on screen
        expect(page.locator("#message")).to_contain_text(f"Banked {total + 100} points")
        page.wait_for_timeout(500)
        expect(page.locator("#message")).to_contain_text(f"Banked {total + 100} points")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "banked")

        # next turn: a die off the table is marked red and busts at once
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        off = [Die(d.value, d.box, 0.9, on_table=(i != 2)) for i, d in enumerate(truth)]
        reader.script.append(off)
        page.set_input_files(
            "#file",
            files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, 80)}],
        )
        expect(page.locator("#dice .die.off")).to_have_count(1)
        bx1, by1, bx2, by2 = off[2].box
        assert pixel(page, bx1, (by1 + by2) / 2) == [220, 38, 38]  # red box
        page.click("#use-roll")
        expect(page.locator("#message")).to_contain_text("Bust: 1 die left the table")
        expect(page.locator("#turn-total")).to_have_text("0")
        assert not errors, errors
        browser.close()


def test_games_played_roll_by_roll_are_scored_on_the_page(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    reader = TruthReader([])
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        page.fill("#player", "kenny")
        page.click("#new-turn")  # a Morning Roll turn under way, then the game changes
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.fill("#typed", "1 2 2 3 4 6")
        page.click("#typed-form button")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        page.select_option("#game", "solitaire-dice")
        page.click("#new-turn")  # a Solitaire Dice sheet (test_page_sheets.py plays one)
        expect(page.locator("#message")).to_contain_text("kenny: roll five dice")
        expect(page.locator("#keeps li")).to_have_count(0)  # the old turn is cleared
        page.fill("#typed", "1 2 3 4 5")
        page.click("#typed-form button")
        options = page.locator("#sheet-moves button")
        expect(options.first).to_contain_text("combos")
        assert options.count() >= 3
        page.select_option("#game", "greed")
        expect(page.locator("#turn-state")).to_have_attribute(
            "data-state", "no turn"
        )  # the sheet is set aside
        page.fill("#typed", "0x1 5 2 3 3")  # Number() took it for a 1
        page.click("#typed-form button")
        expect(page.locator("#message")).to_contain_text("Type the dice values as numbers 1 to 6")
        page.fill("#typed", "1 5 2 3 3")
        page.click("#typed-form button")  # no turn started for greed: the roll is just scored
        expect(page.locator("#keeps li button").first).to_contain_text("Keep 1 5")
        expect(page.locator("#keeps li button").first).to_contain_text("150 pts")
        assert not errors, errors
        browser.close()


def test_dice_missing_from_the_photo_bust_and_the_page_says_why(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    truth = sorted(truth_dice(sample), key=lambda d: d.box[0])
    reader = TruthReader(truth)
    reader.script.append(truth[:4])  # two dice rolled out of view
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        page.goto(server.url + "/")
        page.fill("#player", "tom")
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.set_input_files(
            "#file",
            files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, 85)}],
        )
        expect(page.locator("#reading-note")).to_contain_text(
            "2 dice missing: using this roll busts the turn"
        )
        page.click("#use-roll")
        expect(page.locator("#message")).to_contain_text(
            "Bust: 2 dice missing: the photo shows 4 of the 6 dice rolled"
        )
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "bust")
        browser.close()


class FittingReader(TruthReader):
    """As TruthReader, but each reading says one faint die was added to reach the count told."""

    def __init__(self, dice: list[Die]) -> None:
        super().__init__(dice)
        self.told: list[int | None] = []

    def read(self, image, expected_dice=None) -> Reading:
        self.told.append(expected_dice)
        reading = super().read(image, expected_dice)
        if expected_dice:
            reading.added = 1
            last = reading.dice[-1]
            reading.dice[-1] = Die(last.value, last.box, 0.08, faint=True)
        return reading


class SureFaintReader(FittingReader):
    """As TruthReader, but the rightmost die is a faint box the reader was sure of, found without
    fitting the count (``added`` stays 0)."""

    def read(self, image, expected_dice=None) -> Reading:
        self.told.append(expected_dice)
        reading = TruthReader.read(self, image, expected_dice)
        last = reading.dice[-1]
        reading.dice[-1] = Die(last.value, last.box, 0.12, faint=True)
        return reading


@pytest.mark.parametrize(
    ("reader_class", "note"),
    [
        (FittingReader, "1 faint die added to make the 6 rolled: check it (in yellow)"),
        (SureFaintReader, "1 faint die found: check it (in yellow)"),
    ],
)
def test_live_mode_leaves_a_reading_with_a_faint_die_to_the_player(tmp_path, reader_class, note):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    reader = reader_class(sorted(truth_dice(sample), key=lambda d: d.box[0]))
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser, page, reads = open_turn(p, server, video)
        page.check("#live")
        expect(page.locator("#reading-note")).to_contain_text(note, timeout=20_000)
        chip = page.locator("#dice .die.faint")
        expect(chip).to_have_count(1)  # its chip, and its box:
        expect(chip).to_have_attribute("title", "found faintly: check it, tap to correct")
        x1, y1, _, y2 = reader.dice[-1].box
        assert pixel(page, x1, (y1 + y2) / 2) == [234, 179, 8]
        settled = len(reads)
        assert settled >= 3
        # two more frames sent (one at a time: the first of them read and answered), not a
        # fixed 2 s, which a machine as busy as CI's may fill with no frame at all
        wait_on_page(page, lambda: len(reads) >= settled + 2, "two more frames")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        assert set(reader.told) == {6}  # every frame was read with the dice count of the turn
        page.uncheck("#live")
        page.click("#use-roll")  # the player checked the dice and takes the roll
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        browser.close()


class DoubtingReader(TruthReader):
    """As TruthReader, but the face of the leftmost die is read as a 6 the reader is unsure of."""

    def read(self, image, expected_dice=None) -> Reading:
        reading = super().read(image, expected_dice)
        first = reading.dice[0]
        reading.dice[0] = Die(6, first.box, first.confidence, face_confidence=0.41, unsure=True)
        return reading


def test_a_value_the_reader_is_unsure_of_is_marked_and_waits_for_the_player(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    truth = sorted(truth_dice(sample), key=lambda d: d.box[0])
    reader = DoubtingReader(truth)
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser, page, reads = open_turn(p, server, video)
        page.check("#live")
        expect(page.locator("#reading-note")).to_contain_text(
            "unsure of one value: check it (in yellow, marked ?)", timeout=20_000
        )
        unsure = page.locator("#dice .die.unsure")
        expect(unsure).to_have_count(1)
        expect(unsure).to_have_text("6?")
        x1, y1, _, y2 = truth[0].box
        assert pixel(page, x1, (y1 + y2) / 2) == [234, 179, 8]  # its box, in yellow
        settled = len(reads)
        assert settled >= 3
        # two more frames sent (one at a time: the first of them read and answered), not a
        # fixed 2 s, which a machine as busy as CI's may fill with no frame at all
        wait_on_page(page, lambda: len(reads) >= settled + 2, "two more frames")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.uncheck("#live")
        unsure.click()  # the player looks: it is the die's true value
        page.click(f"#picker button[value='{truth[0].value}']")
        expect(page.locator("#dice .die.unsure")).to_have_count(0)
        expect(page.locator("#dice .die.corrected")).to_have_text(str(truth[0].value))
        expect(page.locator("#reading-note")).not_to_contain_text("unsure")  # checked: said so
        assert chips(page) == [str(d.value) for d in truth]
        page.click("#use-roll")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        browser.close()


def test_a_turn_queued_while_the_tracker_is_down_shows_submitted_once_it_is_back(
    tmp_path, unused_port
):
    """The page logs in through the service to a remote tracker (``--tracker-url``); a turn
    finished while that tracker is down says queued, and the page shows it submitted once the
    service's own retries delivered it."""
    import httpx
    from playwright.sync_api import expect, sync_playwright

    from service.tracker import create_app as create_tracker_app

    from .test_api_tracker import login

    chromium_or_skip()
    video = write_y4m(DrawnRoll().image, tmp_path / "roll.y4m")
    port = unused_port  # held for the test: the tracker comes back on it, nobody else
    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'remote.sqlite3'}")
    with (
        LiveServer(tracker, port=port) as remote,
        httpx.Client(base_url=remote.url, timeout=30) as rc,
    ):
        login(rc, "olga", prefix="")  # an account on the remote tracker
    settings = Settings(
        data_dir=tmp_path / "svc", tracker_url=f"http://127.0.0.1:{port}", outbox_retry_s=0.5
    )
    app = create_app(settings, reader=TruthReader([]))
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        page.fill("#player", "olga")
        with LiveServer(tracker, port=port):
            page.click("#tracker summary")
            page.fill("#password", "correct horse")
            page.press("#password", "Enter")
            expect(page.locator("#tracker-note")).to_contain_text("Logged in as olga")
        page.click("#new-turn")  # the tracker is down now
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.fill("#typed", "2 2 3 4 6 6")
        page.click("#typed-form button")
        expect(page.locator("#message")).to_contain_text(
            "Not sent yet: the tracker cannot be reached now."
        )
        with LiveServer(tracker, port=port) as remote:
            expect(page.locator("#message")).to_contain_text("Sent to the tracker", timeout=20_000)
            turns = httpx.get(f"{remote.url}/api/v1/players/olga/turns", timeout=30).json()["turns"]
        assert [t["score"] for t in turns] == [0]
        assert not errors, errors
        browser.close()
