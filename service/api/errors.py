"""The service API's error statuses, for its OpenAPI schema (:mod:`service.http_errors`).

Example:
    >>> sorted(errors(404, 422))
    [404, 422]
"""

from __future__ import annotations

from typing import Any

from service.http_errors import ErrorBody, error_responses

__all__ = ["ErrorBody", "errors"]

WHY = {
    400: "the body is not valid JSON, or not a readable multipart form",
    404: "no turn with this id (turns are kept a day)",
    409: "the turn does not allow this move now (it is over, or dice are missing from the photo)",
    413: "the upload is larger than the service accepts (DICECAM_MAX_UPLOAD_MB)",
    415: "the photo is not an image dicecam can read, or the body is of an unknown type",
    422: "a field is missing or out of range, or the values cannot be scored",
    500: "the service failed; nothing was changed",
    503: "the dice reader could not be loaded; type the values by hand meanwhile",
}
"""What each error status of the service API means."""


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a service route for these error statuses."""
    return error_responses(WHY, *codes)
