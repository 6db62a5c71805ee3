"""What every request body of the tracker checks (:mod:`service.tracker.schemas` holds the
bodies): no NUL character in what is stored or looked up, and how deeply a value nests."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, model_validator

from service.http_errors import ECHO_CHARS, StrictBody

__all__ = ["PASSWORD_FIELDS", "TrackerBody", "nesting_depth", "shown"]

PASSWORD_FIELDS = frozenset({"password", "new_password"})
"""Fields only hashed or checked, never stored as text: they may hold a NUL character."""


class _TooMany(Exception):
    """More values than a valid body of the model can hold: not walked further."""


def _nul_at(value: Any, where: str, most: int | None = None) -> str | None:
    """Where in ``value`` (strings, keys, lists, dicts) a NUL character is, if anywhere.
    ``most``: how many values (items of lists and dicts, at any depth) to walk at most;
    :class:`_TooMany` past them. Walked with a stack of its own, not by recursion: a value
    nested as deep as JSON parsing allows (about 960 levels) ran out of Python's stack (a 500)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    left = most
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return at
            continue
        if isinstance(item, dict | list) and left is not None:
            left -= len(item)
            if left < 0:
                raise _TooMany
        if isinstance(item, dict):  # each key before its value, in order
            pairs = [((k, f"{at} (a key)"), (v, f"{at}.{k}")) for k, v in item.items()]
            stack.extend(entry for pair in reversed(pairs) for entry in reversed(pair))
        elif isinstance(item, list):
            stack.extend((item[i], f"{at}.{i}") for i in range(len(item) - 1, -1, -1))
    return None


class TrackerBody(StrictBody):
    """A request body of the tracker: text stripped, NUL characters refused."""

    model_config = ConfigDict(str_strip_whitespace=True)
    hashed: ClassVar[frozenset[str]] = PASSWORD_FIELDS
    """The body's password fields, exempt from the NUL check (a subclass adding one extends it)."""
    most_values: ClassVar[int] = 64
    """The most values (items of lists and dicts, at any depth) a valid body holds: the NUL
    check walks no more (a larger body is refused by its fields' checks). A 17 MB list was
    walked whole, seconds in which the server answered nobody. A body of plain fields: 64."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        """Text with a NUL character is refused: PostgreSQL cannot store or look one up (a 500).
        A password (``hashed``) is only hashed: it may hold one."""
        if not isinstance(data, dict):
            return data
        stored = {k: v for k, v in data.items() if k not in cls.hashed}
        try:
            where = _nul_at(stored, "body", cls.most_values)
        except _TooMany:
            return data  # not valid whatever it holds: its fields' checks say why
        if where:
            field = where.removeprefix("body.") if where != "body" else "the body"
            raise ValueError(f"expected text without NUL characters (\\u0000), got one in {field}")
        return data


def shown(text: str) -> str:
    """``text`` as an error's sentence quotes it: whole up to :data:`ECHO_CHARS` characters,
    else its start and its length (a name sent 10,000 characters long came back whole, in the
    answer and three times in a form's page).

    Example:
        >>> shown("ann"), shown("x" * 100).replace("x" * 80, "<80 x>")
        ("'ann'", "'<80 x>...' (100 characters)")
    """
    if len(text) <= ECHO_CHARS:
        return repr(text)
    quoted = repr(text[:ECHO_CHARS])
    return f"{quoted[:-1]}...{quoted[-1]} ({len(text)} characters)"


def nesting_depth(value: Any) -> int:
    """How many lists and dicts deep ``value`` nests (a number: 0; ``{"a": [1]}``: 2)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest
