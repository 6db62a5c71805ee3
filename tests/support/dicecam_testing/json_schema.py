"""The subset of JSON Schema that FastAPI writes into an OpenAPI document, for tests that make
requests from the schema (:mod:`.hostile`): whether a value fits (:func:`valid`, and
:func:`text_valid` for a query or form value), a value that fits (:func:`example`), and the
places inside a value (:func:`nodes`, :func:`replaced`, :func:`removed`).

Example:
    >>> valid({"dice": [7]}, {"type": "object", "properties": {"dice": {"type": "array",
    ...     "items": {"type": "integer", "maximum": 6}}}})
    False
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "SECRET",
    "example",
    "inline_refs",
    "nodes",
    "removed",
    "replaced",
    "text_valid",
    "valid",
]

SECRET = "hunter2-secret"
"""The value :func:`example` gives a field named password, token or secret."""


def inline_refs(schema: Any, root: dict[str, Any] | None = None) -> Any:
    """``schema`` (an OpenAPI document) with each ``$ref`` replaced by what it names."""
    root = schema if root is None else root
    if isinstance(schema, dict):
        if "$ref" in schema:
            node = root
            for step in schema["$ref"].removeprefix("#/").split("/"):
                node = node[step]
            return inline_refs(node, root)
        return {key: inline_refs(value, root) for key, value in schema.items()}
    if isinstance(schema, list):
        return [inline_refs(item, root) for item in schema]
    return schema


def valid(value: Any, schema: dict[str, Any]) -> bool:
    """Whether JSON ``value`` fits ``schema`` (NaN and infinities are no JSON: never)."""
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if "anyOf" in schema:
        return any(valid(value, option) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return False
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
    elif kind == "string":
        if not isinstance(value, str):
            return False
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", math.inf):
            return False
    elif kind == "boolean":
        return isinstance(value, bool)
    elif kind == "null":
        return value is None
    elif kind == "array":
        if not isinstance(value, list):
            return False
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", math.inf):
            return False
        return all(valid(item, schema.get("items", {})) for item in value)
    elif kind == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties", {})
        if any(key not in value for key in schema.get("required", [])):
            return False
        if len(value) > schema.get("maxProperties", math.inf):
            return False
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                ok = valid(item, props[key])
            else:
                ok = extra is not False and (extra is True or valid(item, extra))
            if not ok:
                return False
        return True
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return False
        if "maximum" in schema and value > schema["maximum"]:
            return False
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return False
    return True


def text_valid(text: str, schema: dict[str, Any]) -> bool:
    """Whether ``text`` (a query value, a form field) fits ``schema`` as FastAPI reads it."""
    if "anyOf" in schema:
        return any(text_valid(text, o) for o in schema["anyOf"] if o.get("type") != "null")
    kind = schema.get("type")
    if kind in ("integer", "number"):
        if not re.fullmatch(r"[-+]?[0-9]{1,4000}", text):  # pydantic takes "+3" as 3
            return False
        return valid(int(text), schema)
    if kind == "boolean":
        return text.lower() in {"true", "false", "1", "0", "yes", "no", "on", "off", "t", "f"}
    if kind == "array":
        return text_valid(text, schema.get("items", {}))
    return valid(text, schema)


def example(schema: dict[str, Any]) -> Any:
    """A value that fits ``schema``: every property of an object, the fewest items allowed."""
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        return example(options[0]) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
        return int(min(max(low, 1), schema.get("maximum", math.inf)))
    if kind == "string":
        return "a" * max(schema.get("minLength", 0), 3)
    if kind == "boolean":
        return True
    if kind == "array":
        return [example(schema.get("items", {})) for _ in range(max(schema.get("minItems", 0), 1))]
    if kind == "object":
        out = {key: example(sub) for key, sub in schema.get("properties", {}).items()}
        for key, sub in schema.get("properties", {}).items():  # a secret the answer must not echo
            if any(word in key for word in ("password", "token", "secret")) and valid(SECRET, sub):
                out[key] = SECRET
        extra = schema.get("additionalProperties")
        if not schema.get("properties") and isinstance(extra, dict):
            out["k"] = example(extra)
        return out
    return "a"


def nodes(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The paths to every value inside ``value`` (itself included)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nodes(item, (*path, i))


def replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return out


def removed(value: Any, path: tuple, key: str) -> Any:
    out = copy.deepcopy(value)
    node = out
    for step in path:
        node = node[step]
    del node[key]
    return out
