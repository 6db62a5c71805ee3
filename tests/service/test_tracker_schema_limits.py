"""A roll's limits hold at their edge: a reading of exactly ``MAX_READING_BYTES`` as compact JSON
and a photo of exactly 8 MiB are taken, a byte more is refused naming the limit."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import ValidationError

from service.tracker.schemas import MAX_PHOTO_BYTES, MAX_READING_BYTES, RollIn


def reading_of(size: int) -> dict:
    reading = {"values": [1, 5], "note": ""}
    reading["note"] = "x" * (size - len(json.dumps(reading, separators=(",", ":"))))
    return reading


def photo_of(size: int) -> str:
    return base64.b64encode(b"\xff\xd8\xff" + bytes(size - 3)).decode()


def test_a_reading_at_the_limit_is_taken_and_one_byte_more_refused():
    assert (
        len(json.dumps(reading_of(MAX_READING_BYTES), separators=(",", ":"))) == MAX_READING_BYTES
    )
    assert RollIn(values=[1, 5], reading=reading_of(MAX_READING_BYTES)).reading is not None
    with pytest.raises(ValidationError, match=f"at most {MAX_READING_BYTES} bytes as JSON"):
        RollIn(values=[1, 5], reading=reading_of(MAX_READING_BYTES + 1))


def test_a_photo_at_the_limit_is_taken_and_one_byte_more_refused():
    roll = RollIn(values=[1, 5], photo_jpeg_b64=photo_of(MAX_PHOTO_BYTES))
    assert len(roll.photo_bytes()) == MAX_PHOTO_BYTES
    with pytest.raises(ValidationError, match=f"at most 8 MiB, got {MAX_PHOTO_BYTES + 1} bytes"):
        RollIn(values=[1, 5], photo_jpeg_b64=photo_of(MAX_PHOTO_BYTES + 1))
