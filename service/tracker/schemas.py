"""Request and response bodies of the tracker's JSON API (``/api/v1``)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from service.http_errors import whole_number
from service.tracker.bodies import TrackerBody, nesting_depth, shown
from service.tracker.rules import zone_to_pick

__all__ = [
    "MAX_PASSWORD",
    "MAX_READING_BYTES",
    "MAX_READING_DEPTH",
    "Credentials",
    "NewPassword",
    "PasswordChange",
    "PasswordChanged",
    "PasswordReset",
    "CorrectionIn",
    "CorrectionOut",
    "HistoryPage",
    "PlayerOut",
    "Registration",
    "RollIn",
    "RollOut",
    "Standing",
    "TimezoneIn",
    "TokenOut",
    "TurnIn",
    "TurnOut",
    "parse_day",
]

DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\- ]{0,38}[A-Za-z0-9_.\-]$|^[A-Za-z0-9]$")
MAX_PHOTO_BYTES = 8 * 1024 * 1024
MAX_READING_BYTES = 16 * 1024
"""The largest reading of one roll, as compact JSON: a reading of six dice with a table
outline is about 2 KB. Every page and history that lists a turn loads its readings, so 18 MB
ones made each history page view of their player cost about 65 MB of memory per turn."""
MAX_READING_DEPTH = 32
"""How deeply a reading may nest lists and objects (a reading nests 4: its dice's boxes). One
nested 256 deep was stored, but no JSON answer could hold it: its 201, the turn, the player's
history answered 500, and the outbox that sent it retried it for good."""
MAX_SCORE = 1_000_000
MAX_ROLLS = 60
"""The most rolls a turn's evidence holds."""
MAX_PASSWORD = 256
"""The longest password the tracker takes (argon2 hashes it whole)."""
NewPassword = Annotated[str, Field(min_length=8, max_length=MAX_PASSWORD)]
"""A password a player picks: at registration, when changing it, an administrator's reset."""
MAX_AGE_S = 10 * 366 * 86400
CLIENT_TIMES = frozenset(
    {"day", "date", "played_at", "played_on", "local_time", "submitted_at", "timezone", "round"}
)
"""Fields a client may think it should send with a turn; the tracker decides them itself."""


def _check_name(v: str) -> str:
    if not NAME_RE.match(v):
        raise ValueError(
            "expected a name of 1 to 40 letters, digits, spaces, '.', '_' or '-' "
            f"starting with a letter or digit, got {shown(v)}"
        )
    return v


def parse_day(v: object) -> date:
    """A calendar day written ``YYYY-MM-DD`` (a query's ``before=``), nothing looser: no
    timestamp, no time of day."""
    if isinstance(v, date):
        return v
    text = str(v)
    try:
        if not DAY_RE.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"expected a day written YYYY-MM-DD, e.g. 2026-03-01, got {text[:40]!r}"
        ) from None


def _no_bool(v: Any) -> Any:
    """A number, not JSON's ``true`` or ``false``: pydantic would take them as 1 and 0 (a die
    of 1, a score of 1, a turn played 1 s ago)."""
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {str(v).lower()} (a JSON boolean)")
    return v


def _score_text(v: Any) -> Any:
    """A score sent as text (the add-roll form's field) in ASCII digits only: the integer
    parsing would also take ``+300``, ``300.0`` and ``3_00`` (as 300)."""
    return whole_number(v) if isinstance(v, str) else _no_bool(v)


def _check_score(v: int) -> int:
    if v % 50:
        raise ValueError(f"expected a Morning Roll score, a multiple of 50, got {v}")
    return v


def _check_zone(v: str) -> str:
    zone_to_pick(v)
    return v


class Registration(TrackerBody):
    name: str
    password: NewPassword
    timezone: Annotated[str, Field(max_length=64)]

    _name = field_validator("name")(_check_name)
    _tz = field_validator("timezone")(_check_zone)


class TimezoneIn(TrackerBody):
    """A player's new time zone: their turns count in it from their next day (the first
    midnight there once their day under way is over)."""

    timezone: Annotated[str, Field(max_length=64)]

    _tz = field_validator("timezone")(_check_zone)


class Credentials(TrackerBody):
    name: Annotated[str, Field(max_length=200)]
    password: Annotated[str, Field(max_length=MAX_PASSWORD)]
    """No longer than a registered one can be (a megabyte would only cost hashing time)."""


class PasswordChange(TrackerBody):
    """The token's player's current password and the new one (``PUT /api/v1/me/password``)."""

    password: Annotated[str, Field(max_length=MAX_PASSWORD)]
    """The current password, checked as a login is (a wrong one counts as a failed login)."""
    new_password: NewPassword

    @field_validator("new_password")
    @classmethod
    def _changed(cls, v: str, info: ValidationInfo) -> str:
        if v == info.data.get("password"):
            raise ValueError("expected a new password different from the current one, got the same")
        return v


class PasswordReset(TrackerBody):
    """An administrator's new password for the player ``name`` (``dicecam tracker
    --reset-password``)."""

    name: Annotated[str, Field(max_length=200)]
    new_password: NewPassword


class RollIn(TrackerBody):
    most_values: ClassVar[int] = MAX_READING_BYTES + 64
    """A reading's compact JSON takes at least a byte a value; six values, a photo."""

    values: Annotated[
        list[Annotated[int, Field(ge=1, le=6), BeforeValidator(_no_bool)]], Field(max_length=6)
    ]
    reading: dict[str, Any] | None = None
    photo_jpeg_b64: str | None = None
    """The roll's photo, a JPEG, base64-encoded."""

    @field_validator("reading")
    @classmethod
    def _small(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return v
        # the depth first: json.dumps recurses, and ran out of stack on one ~960 deep
        if (depth := nesting_depth(v)) > MAX_READING_DEPTH:
            raise ValueError(
                f"expected a reading nested at most {MAX_READING_DEPTH} levels deep (a roll's "
                f"dice as dicecam reads them), got one {depth} levels deep"
            )
        try:
            text = json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except ValueError:  # NaN or Infinity: stored, it came back as null, not as sent
            raise ValueError(
                "expected a reading of finite numbers (as JSON has them), got NaN or Infinity in it"
            ) from None
        try:
            size = len(text.encode())
        except UnicodeEncodeError as exc:  # JSON's \ud800: half of a pair, no character
            raise ValueError(
                "expected a reading of text JSON can hold, got half of a UTF-16 surrogate pair "
                f"({text[exc.start]!r}) in it"
            ) from None
        if size > MAX_READING_BYTES:
            raise ValueError(
                f"expected a reading of at most {MAX_READING_BYTES} bytes as JSON (a roll's "
                f"dice as dicecam reads them), got {size} bytes"
            )
        return v

    @field_validator("photo_jpeg_b64")
    @classmethod
    def _jpeg(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            raw = base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(
                "expected base64 of a JPEG photo, got text that is not base64"
            ) from exc
        if len(raw) > MAX_PHOTO_BYTES:
            raise ValueError(
                f"expected a photo of at most {MAX_PHOTO_BYTES // 2**20} MiB, got {len(raw)} bytes"
            )
        if not raw.startswith(b"\xff\xd8\xff"):
            raise ValueError(
                f"expected a JPEG photo (starts with FF D8 FF), got {raw[:4].hex(' ')}"
            )
        return v

    def photo_bytes(self) -> bytes | None:
        return None if self.photo_jpeg_b64 is None else base64.b64decode(self.photo_jpeg_b64)


class TurnIn(TrackerBody):
    most_values: ClassVar[int] = MAX_ROLLS * (RollIn.most_values + 1) + 64

    player: str
    game: Literal["morning-roll"] = "morning-roll"
    score: Annotated[int, Field(ge=0, le=MAX_SCORE)]
    comment: Annotated[str, Field(max_length=500)] = ""
    idempotency_key: Annotated[
        str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")
    ]
    rolls: Annotated[list[RollIn], Field(max_length=MAX_ROLLS)] = []
    age_s: Annotated[
        float | None, Field(ge=0, le=MAX_AGE_S, allow_inf_nan=False), BeforeValidator(_no_bool)
    ] = None
    """Seconds since the turn was played, as the sender counts them when it sends (a turn
    delivered late from an outbox): the server refuses a turn played on another local day
    than today's. A duration, not a time, so the sender's clock may be set wrong."""

    _score_text = field_validator("score", mode="before")(_score_text)
    _score = field_validator("score")(_check_score)

    @field_validator("rolls", mode="before")
    @classmethod
    def _few_rolls(cls, v: Any) -> Any:
        """Too many rolls are refused before each is checked (a million took seconds)."""
        if isinstance(v, list) and len(v) > MAX_ROLLS:
            raise ValueError(f"expected at most {MAX_ROLLS} rolls, got {len(v)}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _no_client_time(cls, data: Any) -> Any:
        """A day or time the client picked is refused by name: the server's clock decides which
        day a turn counts for, so nobody plays tomorrow's round today (or yesterday's late)."""
        if isinstance(data, dict):
            for key in CLIENT_TIMES.intersection(data):
                raise ValueError(
                    f"expected no {key!r}: the tracker sets a turn's day from its own clock and "
                    "the player's registered time zone; a turn sent late says how long ago it "
                    f"was played in 'age_s' (seconds), got {key}={str(data[key])[:40]!r}"
                )
        return data


class CorrectionIn(TrackerBody):
    score: Annotated[int, Field(ge=0, le=MAX_SCORE)]
    reason: Annotated[str, Field(min_length=1, max_length=500)]

    _score_text = field_validator("score", mode="before")(_score_text)
    _score = field_validator("score")(_check_score)


class PlayerOut(BaseModel):
    name: str
    timezone: str
    """The zone whose days the player's turns count for now."""
    is_admin: bool = False
    created_at: datetime
    next_timezone: str | None = None
    """A zone the player changes to, from ``timezone_from`` on (null: none asked for)."""
    timezone_from: datetime | None = None


class TokenOut(BaseModel):
    token: str
    token_type: Literal["bearer"] = "bearer"
    expires_at: datetime
    """From then on the token is refused (401): log in again for a new one."""
    player: PlayerOut


class PasswordChanged(BaseModel):
    """A password changed: the player, and how many of their other tokens were revoked."""

    player: PlayerOut
    tokens_revoked: int
    """The player's other tokens (other devices, whoever knew the old password): refused from
    now on. The token that made the change stays valid."""


class RollOut(BaseModel):
    position: int
    values: list[int]
    reading: dict[str, Any] | None
    photo_url: str | None


class CorrectionOut(BaseModel):
    admin: str
    old_score: int
    new_score: int
    reason: str
    created_at: datetime


class TurnOut(BaseModel):
    id: int
    player: str
    game: str
    day: date
    round: int
    score: int
    comment: str
    idempotency_key: str
    submitted_at: datetime
    local_time: str
    rolls: list[RollOut] = []
    corrections: list[CorrectionOut] = []
    replayed: bool = False
    """True when this answers a resubmission of an already stored turn (same idempotency key)."""


class Standing(BaseModel):
    rank: int
    player: str
    total: int
    turns: int
    best: int
    last_day: date | None


class HistoryPage(BaseModel):
    """A page of a player's turns, newest first (``GET /api/v1/players/{name}/turns``)."""

    player: PlayerOut
    round: int | None
    """The round asked for (a calendar year), or null for every round."""
    limit: int
    turns: list[TurnOut]
    next: str | None
    """The next page's URL (the ``Link: rel="next"`` header too), null on the last page."""
    next_before: date | None
    """The next page's ``before=``: this page's last day; null on the last page."""
