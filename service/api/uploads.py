"""What a client sends: a photo (multipart) or dice values typed by hand (JSON), size-limited."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import HTTPException, Request
from pydantic import AfterValidator, Field, TypeAdapter, ValidationError
from starlette.datastructures import UploadFile

from scoring import GAME_NAMES, get_game
from service.http_errors import (
    StrictBody,
    describe_validation_errors,
    multipart_unparsed,
    whole_number,
)

__all__ = [
    "MOST_DICE",
    "PHOTO_FIELDS",
    "Face",
    "RollInput",
    "TypedRoll",
    "content_type",
    "form_int",
    "int_from_to",
    "parse_roll_input",
    "parse_values",
]

PHOTO_FIELDS = ("photo", "file", "image")
"""Multipart field names accepted for the photo (``photo`` is the documented one)."""


def int_from_to(what: str, low: int, high: int | None = None) -> Any:
    """An integer ``low`` to ``high`` (None: no upper bound) (a JSON integer: ``true``, ``3.0``
    or ``"3"`` is none), shown so in the schema; out of range, the 422 says what was expected
    and what came."""
    span = f"{low} to {high}" if high is not None else f"of {low} or more"

    def check(value: int) -> int:
        if value < low or (high is not None and value > high):
            raise ValueError(f"expected {what} {span}, got {value}")
        return value

    limits = {"minimum": low} if high is None else {"minimum": low, "maximum": high}
    return Annotated[int, Field(strict=True, json_schema_extra=limits), AfterValidator(check)]


Face = int_from_to("a face", 1, 6)
"""A die's face as a route's body gives it: a JSON integer 1 to 6."""

MOST_DICE = max(get_game(game).n_dice for game in GAME_NAMES)
"""The most dice a game rolls at once (Low-High's 13): no roll has more off the table."""

DiceOff = int_from_to("a count of dice off the table", 0, MOST_DICE)
"""How many dice of a roll left the table, as a route's body gives it."""

DiceRolled = int_from_to("a dice count", 1)
"""How many dice were rolled (a photo's ``expected_dice``), as the reader takes it."""


class TypedRoll(StrictBody):
    """A roll typed by hand, as JSON: its values and the dice that left the table."""

    values: list[Face] = Field(
        ..., description="the faces on the table; [] with off_table: every die left it"
    )
    off_table: DiceOff = Field(0, description="how many dice left the table")


PHOTO_OR_VALUES_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["photo"],
                    "properties": {
                        "photo": {"type": "string", "format": "binary"},
                        "values": {
                            "type": "string",
                            "description": "optional corrections: the values as '1,5,5,2,3,6'",
                        },
                    },
                }
            },
            "application/json": {"schema": TypedRoll.model_json_schema()},
        },
    }
}

PHOTO_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["photo"],
                    "properties": {
                        "photo": {"type": "string", "format": "binary"},
                        "expected_dice": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "how many dice were rolled: the reading is fitted "
                            "to that count (the likeliest dice kept, faint ones added and "
                            "marked `faint`) and reports `missing`, `added` and `dropped`",
                        },
                    },
                }
            }
        },
    }
}


@dataclass(slots=True)
class RollInput:
    """One roll as sent: photo bytes (to be read) and/or values (typed or corrections)."""

    photo: bytes | None = None
    filename: str | None = None
    values: list[int] | None = None
    off_table: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _shown(value: Any, most: int = 80) -> str:
    """``repr(value)``, cut to about ``most`` characters for an error message (a form field may
    hold a megabyte), saying how long it was.

    >>> _shown("1,5," * 100, most=12)
    "'1,5,1,5,1,5... (402 characters)"
    """
    text = repr(value)
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def parse_values(raw: Any, *, what: str = "values") -> list[int]:
    """Dice values from a JSON list or a string like ``"1,5,5"`` / ``"1 5 5"``; each 1 to 6.

    >>> parse_values("1, 5 6")
    [1, 5, 6]
    """
    if isinstance(raw, str):
        parts = raw.replace(",", " ").split()
        try:
            raw = [whole_number(p) for p in parts]
        except ValueError:
            raise HTTPException(
                422, f"{what} must be whole numbers 1 to 6 like '1,5,5'; got {_shown(raw)}"
            ) from None
    if not isinstance(raw, list) or not raw:
        raise HTTPException(
            422, f"{what} must be a non-empty list of dice values 1 to 6; got {_shown(raw)}"
        )
    out: list[int] = []
    for v in raw:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6:
            raise HTTPException(422, f"each of {what} must be a die face 1 to 6; got {_shown(v)}")
        out.append(v)
    return out


def _sent_values(raw: Any, off_table: int) -> list[int] | None:
    """Values typed or sent as corrections: none (``""``, ``[]``) with dice off the table is a
    roll whose every die left it (``[]``); none else is no values in a form (None: read the
    photo), and an error as JSON."""
    if raw in ("", []) or (isinstance(raw, str) and not raw.strip()):
        if off_table:
            return []
        if isinstance(raw, str):
            return None
    return parse_values(raw)


def form_int(raw: Any, name: str, kind: Any) -> int:
    """A form field ``name`` holding a whole number (:func:`~service.http_errors.whole_number`),
    checked as ``kind`` (an :func:`int_from_to`) checks a JSON integer; else 422 naming the
    field, what was expected and what came.

    >>> form_int("3", "off_table", DiceOff)
    3
    """
    try:
        value = whole_number(raw)
    except ValueError as exc:
        raise HTTPException(422, f"'{name}': {exc}") from None
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        named = [{**err, "loc": (name, *err["loc"])} for err in exc.errors()]
        raise HTTPException(422, describe_validation_errors(named)) from None


async def read_photo(form: Any) -> tuple[bytes, str | None] | None:
    for name in PHOTO_FIELDS:
        item = form.get(name)
        if isinstance(item, UploadFile):
            data = await item.read()
            if not data:
                raise HTTPException(
                    422, f"the photo ('{name}' field) is empty: choose a photo file"
                )
            return data, item.filename
        if isinstance(item, str) and item:
            raise HTTPException(
                422, f"'{name}' must be a file upload (multipart/form-data), not a text field"
            )
    return None


def content_type(request: Request) -> str:
    """The request's media type, lower case, without parameters ('' when none is given)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def parse_roll_input(request: Request, *, photo_required: bool = False) -> RollInput:
    """A photo as multipart ``photo`` (with optional ``values`` corrections), or JSON values."""
    ctype = content_type(request)
    if ctype == "multipart/form-data":
        try:
            form = await request.form()
        except HTTPException:
            raise
        except Exception as exc:  # malformed multipart body
            sent = request.headers.get("content-type", "")
            raise HTTPException(400, multipart_unparsed(exc, sent)) from None
        photo = await read_photo(form)
        values = form.get("values")
        if values is not None and not isinstance(values, str):
            raise HTTPException(
                422,
                "'values' must be a text field like '1,5,5' (the corrections), not a file upload",
            )
        off_table = form_int(form.get("off_table") or "0", "off_table", DiceOff)
        parsed = RollInput(
            photo=photo[0] if photo else None,
            filename=photo[1] if photo else None,
            values=_sent_values(values, off_table) if isinstance(values, str) else None,
            off_table=off_table,
        )
        if expected := form.get("expected_dice"):
            parsed.extra["expected_dice"] = form_int(expected, "expected_dice", DiceRolled)
        if parsed.photo is None and (photo_required or parsed.values is None):
            raise HTTPException(
                422,
                "missing the photo: send it as a multipart/form-data file field named 'photo'",
            )
        return parsed
    if photo_required:
        raise HTTPException(
            415,
            f"send the photo as multipart/form-data with a file field named 'photo' "
            f"(got content-type {ctype or 'none'!r})",
        )
    if ctype == "application/json":
        try:
            body = await request.json()
        except Exception:
            raise HTTPException(400, "the request body is not valid JSON") from None
        known = set(TypedRoll.model_fields)  # an unknown key is named by TypedRoll below
        if not isinstance(body, dict) or ("values" not in body and set(body) <= known):
            raise HTTPException(
                422, 'missing "values": send JSON like {"values": [1, 5, 5, 2, 3, 6]}'
            )
        try:
            typed = TypedRoll.model_validate(body)
        except ValidationError as exc:
            raise HTTPException(422, describe_validation_errors(exc.errors())) from None
        values = _sent_values(typed.values, typed.off_table)
        return RollInput(values=values, off_table=typed.off_table)
    raise HTTPException(
        415,
        "send a photo as multipart/form-data (file field 'photo') or typed values as JSON "
        f'{{"values": [1, 5, 5]}}; got content-type {ctype or "none"!r}',
    )
