"""Hostile requests made from an OpenAPI schema (``tests/service/test_api_hostile_inputs``):
for each operation, each of its inputs sent wrong in turn, marked as the schema rules it out or
not (:mod:`.json_schema`; inline the document's refs first with its ``inline_refs``).

Example:
    >>> op = {"parameters": [{"name": "rolls", "in": "query", "schema": {"type": "integer"}}]}
    >>> [c.what for c in cases(op) if c.refuse][:2]
    ["query rolls='abc'", "query rolls=''"]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dicecam_testing.json_schema import example, nodes, removed, replaced, text_valid, valid
from dicecam_testing.turns import jpeg

__all__ = ["BAD_VALUES", "LONG", "NAN", "Case", "cases"]
NAN, INF = float("nan"), float("inf")
LONG = "x" * 10_000
BAD_VALUES: list[Any] = [
    "1", 1, 1.5, True, None, [], [1], {}, {"a": 1}, NAN, INF, -INF, 10**30, -(10**30), -1, 0,
    "", LONG, "d\u00e9\U0001f3b2\u202e", "\x00", "a\x00b", "\x07\x1b[31m\r\n",
]  # fmt: skip
"""What replaces each value of a valid JSON body, one at a time."""

BAD_TEXTS = [
    "abc", "", " ", "1.5", "1e3", "NaN", "Infinity", "-1", "0", "7", "13", "+3", "3_0",
    "\u0663", "1" * 31, "9" * 5000, "d\u00e9\U0001f3b2", "\x00", "1\x00", "true", "[1]",
]  # fmt: skip
"""What each query parameter and form field is sent as, one at a time."""

BAD_IDS = [
    "..%2F..", "..", "%2e%2e", "y" * 5000, "d\u00e9\U0001f3b2", "%00", "%ff", "%20",
    "-1", "0", str(10**30), "null", "'; DROP TABLE turns; --",
]  # fmt: skip
"""What each path parameter is sent as: no id of a game in the store."""


# -- the cases -------------------------------------------------------------------------------


@dataclass
class Case:
    """One request; ``refuse``: the schema rules it out, so it must get a 4xx."""

    what: str
    refuse: bool
    params: dict[str, Any] = field(default_factory=dict)
    path: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    files: list[tuple[str, Any]] | None = None
    data: dict[str, str] | None = None


def photo_form(op: dict[str, Any]) -> dict[str, Any] | None:
    content = op.get("requestBody", {}).get("content", {})
    return (content["multipart/form-data"]["schema"]) if "multipart/form-data" in content else None


def json_body(op: dict[str, Any]) -> dict[str, Any] | None:
    content = op.get("requestBody", {}).get("content", {})
    return (content["application/json"]["schema"]) if "application/json" in content else None


def as_json(body: Any) -> tuple[bytes, dict[str, str]]:
    return json.dumps(body).encode(), {"Content-Type": "application/json"}


def base_request(op: dict[str, Any]) -> Case:
    """A request the schema allows: every parameter and a body of the schema's example."""
    params = {
        p["name"]: str(example(p["schema"])).lower()
        if example(p["schema"]) is True
        else str(example(p["schema"]))
        for p in op.get("parameters", [])
        if p["in"] == "query" and p.get("required")
    }
    case = Case("valid", False, params=params)
    if (schema := json_body(op)) is not None:
        case.content, case.headers = as_json(example(schema))
    elif (form := photo_form(op)) is not None:
        case.files = [("photo", ("roll.jpg", jpeg(), "image/jpeg"))]
        case.data = {}
        del form
    return case


def cases(op: dict[str, Any]) -> Iterator[Case]:
    """The hostile requests of operation ``op`` of the schema."""
    base = base_request(op)
    yield Case(
        "an unknown query parameter",
        False,
        params={**base.params, "zzz": LONG},
        content=base.content,
        headers=base.headers,
        files=base.files,
        data=base.data,
    )
    for p in op.get("parameters", []):
        if p["in"] == "path":
            for text in BAD_IDS:
                yield Case(
                    f"path {p['name']}={text[:20]!r}",
                    True,
                    params=base.params,
                    path={p["name"]: text},
                    content=base.content,
                    headers=base.headers,
                    files=base.files,
                    data=base.data,
                )
        elif p["in"] == "query":
            if p.get("required"):
                params = {k: v for k, v in base.params.items() if k != p["name"]}
                yield Case(
                    f"no query {p['name']}",
                    True,
                    params=params,
                    content=base.content,
                    headers=base.headers,
                    files=base.files,
                    data=base.data,
                )
            for text in BAD_TEXTS:
                yield Case(
                    f"query {p['name']}={text[:20]!r}",
                    not text_valid(text, p["schema"]),
                    params={**base.params, p["name"]: text},
                    content=base.content,
                    headers=base.headers,
                    files=base.files,
                    data=base.data,
                )
    if (schema := json_body(op)) is not None:
        good = example(schema)
        for where in nodes(good):
            for bad in BAD_VALUES:
                body = replaced(good, where, bad)
                yield Case(
                    f"json {'.'.join(map(str, where)) or 'body'}={str(bad)[:20]!r}",
                    not valid(body, schema),
                    params=base.params,
                    content=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                )
            node = good
            for step in where:
                node = node[step]
            if isinstance(node, dict):
                sub = schema
                for step in where:
                    sub = (
                        sub["properties"].get(step)
                        or sub.get("additionalProperties")
                        or sub.get("items")
                    )
                for key in list(node):
                    body = removed(good, where, key)
                    yield Case(
                        f"json without {key}",
                        not valid(body, schema),
                        params=base.params,
                        content=json.dumps(body).encode(),
                        headers={"Content-Type": "application/json"},
                    )
                body = replaced(good, where, {**node, "zzz\x00": 1})
                yield Case(
                    "json unknown key",
                    not valid(body, schema),
                    params=base.params,
                    content=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                )
        raw = [
            b"",
            b"{",
            b"{not json}",
            b"[1,",
            b"\xff\xfe\x00",
            b"{'a': 1}",
            b"nul",
            LONG.encode(),
        ]
        for content in raw:
            yield Case(
                f"json body {content[:12]!r}",
                True,
                params=base.params,
                content=content,
                headers={"Content-Type": "application/json"},
            )
        yield Case(
            "a JSON body after a BOM (RFC 8259 lets a parser skip it)",
            False,
            params=base.params,
            content=b"\xef\xbb\xbf" + json.dumps(good).encode(),
            headers={"Content-Type": "application/json"},
        )
        yield Case(
            "a JSON body in Latin-1",
            True,
            params=base.params,
            content=b'{"\xe9": "\xe9"}',
            headers={"Content-Type": "application/json"},
        )
        for kind in ("text/plain", "application/x-www-form-urlencoded", "application/xml"):
            yield Case(
                f"a JSON body as {kind}",
                True,
                params=base.params,
                content=json.dumps(good).encode(),
                headers={"Content-Type": kind},
            )
        yield Case(
            "a JSON body without a type",
            True,
            params=base.params,
            content=json.dumps(good).encode(),
            headers={"Content-Type": ""},
        )
    if (form := photo_form(op)) is not None:
        photo = jpeg()
        broken = [
            ("an empty photo", b"", "image/jpeg"),
            ("a text file", b"these are not dice\n", "text/plain"),
            ("a truncated JPEG", photo[: len(photo) // 3], "image/jpeg"),
            ("a JPEG's header alone", photo[:20], "image/jpeg"),
            ("NUL bytes", b"\x00" * 2048, "image/jpeg"),
        ]
        for what, content, kind in broken:
            yield Case(
                what,
                True,
                params=base.params,
                files=[("photo", ("roll.jpg", content, kind))],
                data={},
            )
        yield Case(
            "a form without the photo",
            True,
            params=base.params,
            files=[("other", ("a.jpg", photo, "image/jpeg"))],
            data={},
        )
        yield Case(
            "the photo as text",
            True,
            params=base.params,
            data={"photo": "abc"},
            files=[("other", ("a.txt", b"x", "text/plain"))],
        )
        yield Case(
            "a multipart type without a boundary",
            True,
            params=base.params,
            content=b"--x\r\n",
            headers={"Content-Type": "multipart/form-data"},
        )
        yield Case(
            "a broken multipart body",
            True,
            params=base.params,
            content=b"--x\r\nzz",
            headers={"Content-Type": "multipart/form-data; boundary=x"},
        )
        if json_body(op) is None:
            yield Case(
                "a JSON body for a form",
                True,
                params=base.params,
                content=b'{"photo": 1}',
                headers={"Content-Type": "application/json"},
            )
        for name, sub in form.get("properties", {}).items():
            if sub.get("format") == "binary":
                continue
            yield Case(
                f"form {name} as a file",
                True,
                params=base.params,
                files=[
                    ("photo", ("roll.jpg", jpeg(), "image/jpeg")),
                    (name, ("f.txt", b"3", "text/plain")),
                ],
            )
            for text in BAD_TEXTS:
                # an empty field is a field not given, as a page's form sends one
                refuse = not text_valid(text, sub) and (text or name in form.get("required", []))
                yield Case(
                    f"form {name}={text[:20]!r}",
                    bool(refuse),
                    params=base.params,
                    files=[("photo", ("roll.jpg", jpeg(), "image/jpeg"))],
                    data={name: text},
                )
    if json_body(op) is None and photo_form(op) is None:
        yield Case(
            "a body where none is taken",
            False,
            params=base.params,
            content=b"\x00{not json",
            headers={"Content-Type": "application/json"},
        )
