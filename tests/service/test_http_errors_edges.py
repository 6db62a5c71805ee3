"""Error sentences at their edges: a body with many unknown keys names the first five and
counts the rest."""

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
