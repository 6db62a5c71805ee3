"""The turn a :class:`~service.tracker_client.TrackerClient` submits: its rolls' evidence and
its JSON body, and the body the outbox keeps once the tracker holds the photos."""

from __future__ import annotations

import base64
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RollEvidence", "TurnSubmission", "without_photos"]


class RollEvidence(BaseModel):
    """One roll of the turn: the values kept in play, the reading, the photo (JPEG bytes)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    values: list[int]
    reading: dict[str, Any] | None = None
    """``vision.Reading.to_dict()``."""
    photo: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"values": list(self.values), "reading": self.reading}
        if self.photo is not None:
            out["photo_jpeg_b64"] = base64.b64encode(self.photo).decode()
        return out


def without_photos(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn's JSON body (:meth:`TurnSubmission.to_json`) with each roll's photo replaced by
    its size in bytes (``photo_bytes``): what the outbox keeps of a delivered turn, whose
    photos the tracker holds (a year of them was kept twice, base64 in ``delivered/``)."""
    rolls = turn.get("rolls")
    if not isinstance(rolls, list):
        return turn
    slim = []
    for roll in rolls:
        if isinstance(roll, dict) and isinstance(roll.get("photo_jpeg_b64"), str):
            b64 = roll["photo_jpeg_b64"]
            size = len(b64) * 3 // 4 - b64[-2:].count("=")
            roll = {k: v for k, v in roll.items() if k != "photo_jpeg_b64"}
            roll["photo_bytes"] = size
        slim.append(roll)
    return {**turn, "rolls": slim}


class TurnSubmission(BaseModel):
    """A finished Morning Roll turn.

    Example:
        >>> t = TurnSubmission(player="heather", score=600, rolls=[RollEvidence(values=[1])])
        >>> len(t.idempotency_key)
        36
    """

    player: str
    score: int
    comment: str = ""
    game: str = "morning-roll"
    idempotency_key: str = Field(default_factory=lambda: str(uuid.uuid4()))
    rolls: list[RollEvidence] = []

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "game": self.game,
            "score": self.score,
            "comment": self.comment,
            "idempotency_key": self.idempotency_key,
            "rolls": [r.to_json() for r in self.rolls],
        }
