"""What the tracker's request bodies check, at their edges: a name of 40 characters and not 41,
a roll's faces 1 to 6 and at most six dice, a reading's size counted in UTF-8 bytes, a photo
that starts as a JPEG does (FF D8 FF) in strict base64, a score in plain digits, and a day
cursor written YYYY-MM-DD."""

from __future__ import annotations

import base64
import json
from datetime import date

import pytest
from pydantic import ValidationError

from service.tracker.schemas import (
    MAX_READING_BYTES,
    Registration,
    RollIn,
    TurnIn,
    parse_day,
)

KEY = "key-12345"


def test_a_name_is_at_most_40_characters():
    assert Registration(name="a" * 40, password="long-password", timezone="UTC").name == "a" * 40
    with pytest.raises(ValidationError, match="expected a name of 1 to 40 letters"):
        Registration(name="a" * 41, password="long-password", timezone="UTC")


@pytest.mark.parametrize("values", [[0], [7], [1, 2, 3, 4, 5, 6, 1]])
def test_a_roll_holds_at_most_six_faces_from_1_to_6(values):
    with pytest.raises(ValidationError, match="values"):
        RollIn(values=values)
    assert RollIn(values=[1, 6, 6, 6, 6, 6]).values == [1, 6, 6, 6, 6, 6]


def test_a_readings_size_is_its_utf8_bytes_not_its_escaped_ascii():
    """A reading of exactly the limit in UTF-8 (each 'é' two bytes, six as \\u00e9) is taken."""
    reading = {"note": ""}
    room = MAX_READING_BYTES - len(json.dumps(reading, separators=(",", ":")))
    reading["note"] = "x" * (room % 2) + "é" * (room // 2)
    assert len(json.dumps(reading, separators=(",", ":"), ensure_ascii=False).encode()) == (
        MAX_READING_BYTES
    )
    assert RollIn(values=[1], reading=reading).reading == reading


@pytest.mark.parametrize(
    ("photo", "why"),
    [
        (base64.b64encode(b"\xff\xd8\x00\x00").decode(), "starts with FF D8 FF), got ff d8 00 00"),
        (base64.b64encode(b"GIF89a").decode(), "got 47 49 46 38"),
        ("/9j/" + "!!" + "AAAA", "not base64"),
        (base64.b64encode(b"\xff\xd8\xff\xe0").decode()[:-2] + " ==", "not base64"),
    ],
)
def test_a_photo_is_strict_base64_of_a_jpeg(photo, why):
    with pytest.raises(ValidationError, match=why.replace("(", r"\(").replace(")", r"\)")):
        RollIn(values=[1], photo_jpeg_b64=photo)


@pytest.mark.parametrize("score", ["+300", "300.0", "3_00", "٣٠٠"])
def test_a_score_sent_as_text_is_plain_digits(score):
    with pytest.raises(ValidationError, match="expected a whole number in the digits 0-9"):
        TurnIn(player="kenny", score=score, idempotency_key=KEY)
    assert TurnIn(player="kenny", score="300", idempotency_key=KEY).score == 300


@pytest.mark.parametrize("text", ["20260301", "2026-03-01T00:00", "2026-3-1"])
def test_a_day_cursor_is_written_yyyy_mm_dd(text):
    with pytest.raises(ValueError, match="expected a day written YYYY-MM-DD"):
        parse_day(text)
    assert parse_day("2026-03-01") == date(2026, 3, 1)
