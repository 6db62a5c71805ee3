"""service.api.uploads' public helpers on their own: dice values from a list or a string, each a
die face; anything else a 422 that says what came."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from service.api.uploads import parse_values


def test_values_are_read_from_a_list_or_a_string_of_faces():
    assert parse_values([1, 5, 6]) == [1, 5, 6]
    assert parse_values(" 1, 5 6,2 ") == [1, 5, 6, 2]


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ([True, 5], "each of values must be a die face 1 to 6; got True"),
        ([1, False], "each of values must be a die face 1 to 6; got False"),
        ([1, 7], "each of values must be a die face 1 to 6; got 7"),
        ([0], "each of values must be a die face 1 to 6; got 0"),
        ([1, 2.0], "each of values must be a die face 1 to 6; got 2.0"),
        ([], "values must be a non-empty list of dice values 1 to 6; got []"),
        ("1,x", "values must be whole numbers 1 to 6 like '1,5,5'; got '1,x'"),
    ],
)
def test_anything_but_faces_is_refused_saying_what_came(raw, says):
    with pytest.raises(HTTPException) as refused:
        parse_values(raw)
    assert refused.value.status_code == 422
    assert refused.value.detail == says
