"""Error answers as the service's and the tracker's OpenAPI schemas document them.

Both apps answer every error with JSON whose ``detail`` sentence says what was expected and what
came (FastAPI's own validation errors are turned into such a sentence too). Documenting that
body, rather than FastAPI's default list of validation errors, keeps the schema true for
clients and for contract tests (``tests/service/test_openapi_contract.py``).

Example:
    >>> sorted(error_responses({404: "no such turn", 422: "a field is wrong"}, 404))
    [404]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = [
    "ECHO_CHARS",
    "ErrorBody",
    "JSON_DEPTH",
    "LONG_ECHO",
    "StrictBody",
    "answer_http_errors",
    "clip_echoes",
    "describe_validation_errors",
    "error_responses",
    "multipart_unparsed",
    "not_json_body",
    "validation_status",
    "whole_number",
]

_PLACES = ("query", "path", "header", "cookie")  # where FastAPI found a parameter
_SECRETS = ("password", "token", "secret")  # a field named so is never echoed back, nor logged
_WHOLE = re.compile(r"-?[0-9]+")  # [0-9]: ASCII digits only (\d takes other scripts' too)


def multipart_unparsed(why: object, content_type: str) -> str:
    """The sentence for a multipart body the parser refused: its reason and the type that came.
    The reason is Starlette's detail (not its ``str()``, which starts with the status), but
    headers over the multipart library's limit (a filename of thousands of characters) are
    named: Starlette calls them "Invalid multipart data." as it does any broken body.

    Example:
        >>> multipart_unparsed("Missing boundary in multipart.", "multipart/form-data")
        "could not parse the multipart form: Missing boundary in multipart (content-type 'multipart/form-data')"
    """  # noqa: E501
    reason = str(getattr(why, "detail", why)).rstrip(".")
    refused = getattr(why, "__context__", None) or why  # Starlette's MultiPartException
    cause = str(getattr(refused, "__cause__", None) or "")  # the library's error under it
    if "header size" in cause.lower():
        reason = f"{cause.rstrip('.')} (a part's headers, its filename among them, are too long)"
    return f"could not parse the multipart form: {reason} (content-type {content_type[:120]!r})"


JSON_DEPTH = 500
"""The nesting (arrays and objects together) a JSON body is sure to be parsed at. Python's
parser stops where its stack runs out (about 960 levels, depending on the stack); FastAPI
answered a body nested deeper with a bare "There was an error parsing the body"."""

TOO_DEEP = (
    f"expected a JSON body nested at most {JSON_DEPTH} levels deep (arrays and objects "
    "together), got one nested too deep for the JSON parser"
)
"""The 400's detail for a body the JSON parser ran out of stack on."""


ECHO_MOST = 1000
"""The most values (items and keys, at any depth) an input may hold to be echoed back: a
larger one is not even walked. A 17 MB list was walked (is a password in it?) and written out
whole for 80 characters of it: 13 s in which the server answered nobody."""


def _holds_secret(value: Any, most: int = ECHO_MOST) -> bool:
    """Whether ``value`` (a body that came whole) holds a field :data:`_SECRETS` names; also
    True for one of more than ``most`` values, not walked (it is not echoed either way)."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            keys = [str(k).lower() for k in islice(item, most - seen + 1)]
            if any(word in k for k in keys for word in _SECRETS):
                return True
            items = item.values()
        elif isinstance(item, list | tuple):
            items = item
        else:
            continue
        seen += len(items)
        if seen > most:
            return True
        stack.extend(items)
    return False


class ErrorBody(BaseModel):
    """An error answer: ``detail`` says what went wrong; some answers add fields."""

    model_config = ConfigDict(extra="allow")

    detail: str = Field(..., description="what was wrong, what was expected and what came")


class StrictBody(BaseModel):
    """A request body that refuses a key it does not declare (a misspelt one would otherwise
    be dropped, its field left at its default): the 422 names the unknown keys and the keys
    taken. The schema shows ``additionalProperties: false``. Response models stay lax.

    Example:
        >>> class Keep(StrictBody):
        ...     dice: list[int]
        >>> try:
        ...     Keep.model_validate({"dice": [1], "bank": True})
        ... except ValueError as exc:
        ...     print(describe_validation_errors(exc.errors()))
        the request body: expected only the key 'dice', got the unknown key 'bank'
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data  # not an object: the model's own error says so
        taken = [field.alias or name for name, field in cls.model_fields.items()]
        count = len(data) - len(set(taken).intersection(data))  # a million keys: not listed
        if not count:
            return data
        unknown = [repr(str(key)[:40]) for key in islice((k for k in data if k not in taken), 5)]
        shown = ", ".join(unknown) + (f" and {count - 5} more" if count > 5 else "")
        keys = ", ".join(repr(key) for key in taken)
        raise ValueError(
            f"expected only the key{'s' if len(taken) > 1 else ''} {keys}, got the unknown "
            f"key{'s' if len(unknown) > 1 else ''} {shown}"
        )


def whole_number(text: str) -> int:
    """``text`` (a form field, a query) as an integer: ASCII digits, a ``-`` before them at
    most. Python's ``int()`` also takes ``"+3"``, ``" 3 "``, ``"3_0"`` and other scripts'
    digits (``"\u0663"``); the caller checks the range.

    Example:
        >>> whole_number("-3")
        -3
        >>> whole_number("3_0")
        Traceback (most recent call last):
        ValueError: expected a whole number in the digits 0-9, got '3_0'

    Raises:
        ValueError: ``text`` is anything else, or more digits than ``int()`` converts
            (``sys.get_int_max_str_digits()``); the message says what came.
    """
    if not isinstance(text, str) or not _WHOLE.fullmatch(text):
        shown = repr(text) if isinstance(text, str) else f"a {type(text).__name__}"
        raise ValueError(f"expected a whole number in the digits 0-9, got {shown[:80]}")
    try:
        return int(text)
    except ValueError:  # more digits than int() converts: its message is advice for the server
        most, digits = sys.get_int_max_str_digits(), len(text.lstrip("-"))
        raise ValueError(
            f"expected a whole number of at most {most} digits, got one of {digits} digits"
        ) from None


def describe_validation_errors(errors: Iterable[Mapping[str, Any]]) -> str:
    """One sentence for pydantic's validation ``errors``: each field, what was expected and
    what came. A password, token or secret (a field so named, or a body holding one) is never
    echoed back.

    Example:
        >>> describe_validation_errors([{"type": "missing", "loc": ("body", "player")}])
        "missing field 'player'"
        >>> describe_validation_errors(
        ...     [{"type": "int_parsing", "loc": ("query", "round"), "input": "x",
        ...       "msg": "Input should be a valid integer"}])
        "'round' (in the query): Input should be a valid integer (got 'x')"
    """
    parts = []
    for err in errors:
        kind = err.get("type")
        if kind == "json_invalid":  # loc: the character where parsing stopped
            parts.append("the request body is not valid JSON")
            continue
        loc = [str(x) for x in err.get("loc", ())]
        place = loc[0] if loc and loc[0] in _PLACES else None
        field = ".".join(x for x in loc[1 if place or loc[:1] == ["body"] else 0 :])
        where = f"'{field}'" if field else "the request body"
        if place:
            where += f" (in the {place})"
        if kind == "missing":
            parts.append(f"missing field {where}" if field else f"missing {where}")
            continue
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if "input" in err and "got " not in msg and not _secret(loc, err["input"]):
            got = repr(err["input"])
            msg = f"{msg} (got {got[:80]}{'...' if len(got) > 80 else ''})"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts) or "invalid request"


def _secret(loc: list[str], value: Any) -> bool:
    """Whether the input ``value`` at ``loc`` is not to be echoed: a secret's, or too large."""
    return any(word in x.lower() for x in loc for word in _SECRETS) or _holds_secret(value)


ECHO_CHARS = 80
"""How much of a long input an error's sentence shows (then how many characters it had)."""
LONG_ECHO = 120
"""An input echoed longer than this is clipped to :data:`ECHO_CHARS` and its length."""

_LONG_QUOTED = re.compile(rf"'([^'\n]{{{LONG_ECHO + 1},}})'")
_LONG_WORD = re.compile(rf"[^\s']{{{LONG_ECHO + 1},}}")


def clip_echoes(detail: str) -> str:
    """``detail`` with each long input it echoes (a quoted span, or a word, of over 120
    characters: an id, a game, a path sent 10,000 characters long) cut to its first
    :data:`ECHO_CHARS` characters and its length, as validation errors show one.

    Example:
        >>> clip_echoes("no turn with id '" + "y" * 200 + "'").replace("y" * 80, "<80 y>")
        "no turn with id '<80 y>...' (200 characters)"
    """

    def quoted(match: re.Match[str]) -> str:
        text = match.group(1)
        return f"'{text[:ECHO_CHARS]}...' ({len(text)} characters)"

    def word(match: re.Match[str]) -> str:
        text = match.group(0)
        return f"{text[:ECHO_CHARS]}... ({len(text)} characters)"

    return _LONG_WORD.sub(word, _LONG_QUOTED.sub(quoted, detail))


def _unparsed_body(cause: ValueError) -> str:
    """What FastAPI's bare "There was an error parsing the body" was about, when the JSON
    parser raised ``cause`` (other than a JSON syntax error, which is a 422 of its own)."""
    if isinstance(cause, UnicodeDecodeError):
        return (
            "expected a JSON body of UTF-8 text, got bytes that are not text "
            f"({cause.encoding}: {cause.reason} at byte {cause.start})"
        )
    if "digits" in str(cause):  # int()'s limit on a number's digits
        most = sys.get_int_max_str_digits()
        return f"expected a JSON body whose numbers have at most {most} digits, got a longer one"
    return f"expected a JSON body the parser can read, got one it could not: {cause}"


def not_json_body(errors: Iterable[Mapping[str, Any]], content_type: str) -> str | None:
    """The 415 sentence for a JSON model's body sent as another type (``text/plain``, a form,
    none), which FastAPI passes on as its bytes; None for other validation errors. The body is
    named by its type, never echoed: a login's holds a password.

    Example:
        >>> not_json_body([{"loc": ("body",), "input": b"name=ann"}], "text/plain")
        "expected a JSON body (content-type 'application/json'), got content-type 'text/plain'"
    """
    if not any(
        tuple(e.get("loc", ())) == ("body",) and isinstance(e.get("input"), bytes) for e in errors
    ):
        return None
    came = f"content-type {content_type[:80]!r}" if content_type else "no content-type"
    return f"expected a JSON body (content-type 'application/json'), got {came}"


def validation_status(errors: Iterable[Mapping[str, Any]]) -> int:
    """400 for a body that is not JSON at all (as the photo routes answer it), else 422."""
    kinds = {err.get("type") for err in errors}
    return 400 if "json_invalid" in kinds else 422


def error_responses(why: Mapping[int, str], *codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route for these error statuses, each an :class:`ErrorBody`
    described by ``why[code]``.

    Raises:
        KeyError: a status ``why`` does not describe.
    """
    return {code: {"model": ErrorBody, "description": why[code]} for code in codes}


def answer_http_errors(app: FastAPI, page: Callable[[Any, str, int], Any] | None = None) -> None:
    """Make ``app`` answer an address it does not serve, or a method it does not take there,
    with a sentence saying what came and what it serves; 405 carries an ``Allow`` header naming
    every method its schema gives the path (RFC 9110), and HEAD where it takes GET.

    Starlette names only the methods of the first route whose path matched, and a path served
    by several routes (GET and PUT of one resource, say) has one route per method. A path the
    schema leaves out (HTML pages) keeps Starlette's header. With ``page(request, sentence,
    status)``, an error outside ``/api/`` is answered with it (a person reads it). Other HTTP
    errors are answered as FastAPI answers them.
    """
    from fastapi.exception_handlers import http_exception_handler
    from starlette.exceptions import HTTPException
    from starlette.routing import compile_path, get_route_path

    paths: list[tuple[Any, set[str]]] = []

    def allowed(path: str) -> set[str]:
        if not paths:  # the schema is built once, at the first 405
            for template, operations in app.openapi().get("paths", {}).items():
                methods = {m.upper() for m in operations if m.upper() in _METHODS}
                paths.append((compile_path(template)[0], methods))
        found = set().union(*(m for regex, m in paths if regex.match(path)))
        return found | {"HEAD"} if "GET" in found else found

    @app.exception_handler(HTTPException)
    async def _http_error(request: Any, exc: HTTPException) -> Any:
        path = get_route_path(request.scope)
        shown = request.scope.get("root_path", "") + path
        if exc.status_code == 405:
            methods = allowed(path)
            if methods:
                exc.headers = {**(exc.headers or {}), "Allow": ", ".join(sorted(methods))}
            if exc.detail == "Method Not Allowed":  # no route took the method: say which do
                exc.detail = f"{request.method} is not taken at {shown}" + (
                    f"; expected {', '.join(sorted(methods))}" if methods else ""
                )
        elif exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
            exc.detail = TOO_DEEP  # FastAPI's "error parsing the body": too deep to parse
        elif exc.status_code == 400 and isinstance(exc.__cause__, ValueError):
            exc.detail = _unparsed_body(exc.__cause__)  # not text, or a number too long
        elif exc.status_code == 400 and _multipart_refused(exc):  # a form's body, as the API's
            exc.detail = multipart_unparsed(exc, request.headers.get("content-type", ""))
        elif exc.status_code == 404 and exc.detail == "Not Found":  # no route at the address
            exc.detail = f"nothing at {shown} (the addresses served are in /openapi.json)"
        if isinstance(exc.detail, str):  # an id or a name sent 10,000 characters long
            exc.detail = clip_echoes(exc.detail)
        if page is not None and not path.startswith("/api/"):
            return page(request, str(exc.detail), exc.status_code)
        return await http_exception_handler(request, exc)


_METHODS = {"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}


def _multipart_refused(exc: BaseException) -> bool:
    """Whether Starlette raised ``exc`` for a multipart body its parser refused (it raises the
    HTTP error while handling the parser's ``MultiPartException``)."""
    from starlette.formparsers import MultiPartException

    return isinstance(exc.__context__, MultiPartException)
