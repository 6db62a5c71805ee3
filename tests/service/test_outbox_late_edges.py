"""Which queued turns the outbox refuses itself as too late (``refuse_late``), on its files: the
22-hour line exactly, a turn someone still sends, an entry without a readable time; and the age
sent with a turn when the client's clock went back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.tracker_client.late import age_s, refuse_late, with_age
from service.tracker_client.outbox import Outbox, OutboxEntry

NOW = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)
PHOTO = {"values": [1, 5], "reading": None, "photo_jpeg_b64": "/9j/AA=="}


def queued(box: Outbox, key: str, created_at: str) -> None:
    turn = {"player": "tom", "score": 600, "idempotency_key": key, "rolls": [PHOTO]}
    box.put(OutboxEntry(key, "http://t", turn, created_at=created_at))


def test_turns_22_hours_old_or_more_are_refused_on_disk_and_the_rest_left(tmp_path: Path):
    box = Outbox(tmp_path)
    hours = {"fresh": 22 - 1 / 3600, "line": 22, "day_old": 23, "old": 30, "held": 30}
    for key, h in hours.items():
        queued(box, key, (NOW - timedelta(hours=h)).isoformat())
    queued(box, "naive", "2027-03-01T08:00:00")  # no zone: its age cannot be read
    refused = refuse_late(box, NOW, keep={"held"})
    assert sorted(refused) == ["day_old", "line", "old"]
    again = Outbox(tmp_path)  # what a restarted service finds
    assert sorted(e.key for e in again.entries("pending")) == ["fresh", "held", "naive"]
    assert sorted(e.key for e in again.entries("rejected")) == ["day_old", "line", "old"]
    old = again.find("old")
    assert old.last_error == refused["old"]
    assert old.last_error.startswith("not entered: the turn was played 30 hours ago")
    assert old.turn["rolls"] == [PHOTO]  # kept whole, photo and all
    assert refuse_late(again, NOW) == {"held": again.find("held").last_error}  # let go of now


def test_a_turn_queued_after_now_by_a_clock_set_back_is_sent_as_just_played(tmp_path: Path):
    entry = OutboxEntry(
        "k", "http://t", {"score": 50}, created_at=(NOW + timedelta(hours=2)).isoformat()
    )
    assert age_s(entry, NOW) == 0.0
    assert with_age(entry, NOW) == {"score": 50, "age_s": 0.0}  # the tracker refuses one below 0
    played = OutboxEntry(
        "p", "http://t", {"score": 50}, created_at=(NOW - timedelta(seconds=90)).isoformat()
    )
    assert with_age(played, NOW) == {"score": 50, "age_s": 90.0}
    naive = OutboxEntry("n", "http://t", {"score": 50}, created_at="2027-03-02T08:00:00")
    assert (age_s(naive, NOW), with_age(naive, NOW)) == (None, {"score": 50})


def test_the_reason_gives_the_queueing_time_in_utc_whatever_zone_it_was_written_in(
    tmp_path: Path,
):
    """A client whose clock gives another zone wrote ``created_at`` in it: the reason said that
    local time with "UTC" after it (09:00 in Berlin was shown as "09:00 UTC")."""
    from zoneinfo import ZoneInfo

    box = Outbox(tmp_path)
    berlin = (NOW - timedelta(hours=30)).astimezone(ZoneInfo("Europe/Berlin"))
    queued(box, "berlin", berlin.isoformat())  # 2027-03-01T04:00:00+01:00
    queued(box, "utc", (NOW - timedelta(hours=30)).isoformat())
    refused = refuse_late(box, NOW)
    for key in ("berlin", "utc"):
        assert "(queued 2027-03-01T03:00 UTC)" in refused[key], refused[key]
