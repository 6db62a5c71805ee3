"""Error sentences at their edges: a body with many unknown keys names the first five and
counts the rest; an input is echoed cut at 80 characters, and not at all past 1000 values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from service.api.calibration import CalibrationIn
from service.http_errors import describe_validation_errors

BODY = {"points": [[0, 0], [1, 0], [0, 1]], "width": 2, "height": 2}


@pytest.mark.parametrize(
    ("unknown", "said"),
    [
        (5, "the unknown keys 'k0', 'k1', 'k2', 'k3', 'k4'"),
        (6, "the unknown keys 'k0', 'k1', 'k2', 'k3', 'k4' and 1 more"),
        (7, "the unknown keys 'k0', 'k1', 'k2', 'k3', 'k4' and 2 more"),
    ],
)
def test_unknown_keys_past_five_are_counted_not_listed(unknown, said):
    with pytest.raises(ValidationError) as caught:
        CalibrationIn.model_validate({**BODY, **{f"k{i}": i for i in range(unknown)}})
    sentence = describe_validation_errors(caught.value.errors())
    assert sentence.endswith(said), sentence
    assert "'points', 'width', 'height', 'image'" in sentence


def test_an_input_echoed_back_is_cut_at_80_characters():
    long = "x" * 200
    said = describe_validation_errors(
        [{"type": "string_type", "loc": ("body", "name"), "input": long, "msg": "bad"}]
    )
    assert said == f"'name': bad (got {repr(long)[:80]}...)"
    short = describe_validation_errors(
        [{"type": "string_type", "loc": ("body", "name"), "input": "x" * 10, "msg": "bad"}]
    )
    assert short == f"'name': bad (got {'x' * 10!r})"


@pytest.mark.parametrize(("values", "echoed"), [(1000, True), (1001, False)])
def test_an_input_of_more_than_1000_values_is_not_echoed(values, echoed):
    said = describe_validation_errors(
        [{"type": "list_type", "loc": ("body", "dice"), "input": [0] * values, "msg": "bad"}]
    )
    assert ("(got [0, 0" in said) is echoed, said
