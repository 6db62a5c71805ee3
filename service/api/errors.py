"""The service API's error statuses, for its OpenAPI schema (:mod:`service.http_errors`).

Example:
    >>> sorted(errors(404, 422))
    [404, 422]
    >>> unreadable_photo(ValueError("truncated or corrupt image: <bytes> (broken data)")).detail
    'dicecam cannot read this photo: truncated or corrupt image: the photo (broken data)'
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import HTTPException

from service.http_errors import ErrorBody, error_responses

__all__ = ["ErrorBody", "errors", "unreadable_photo"]

WHY = {
    400: "the body is not valid JSON, or not a readable multipart form",
    401: "the tracker refused the name and password",
    404: "no turn with this id (turns are kept a day), or no tracker to log in to",
    408: "the photo upload stalled: nothing came for DICECAM_UPLOAD_IDLE_S seconds",
    409: "the turn does not allow this move now (it is over, or dice are missing from the photo)",
    413: "the upload is larger than the service accepts (DICECAM_MAX_UPLOAD_MB)",
    415: "the photo is not an image dicecam can read, or the body is of an unknown type",
    422: "a field is missing or out of range, or the values cannot be scored",
    429: "too many wrong passwords lately (the detail names the limit and the wait; try again "
    "after Retry-After seconds)",
    500: "the service (or the dice reader, on this photo) failed unexpectedly: the detail says "
    "so with the error id (`error_id`), under which the server's log tells what went wrong",
    503: "the dice reader could not be loaded (type the values by hand meanwhile), is busy "
    "with as many photos as it takes (send again after Retry-After seconds), or the "
    "tracker cannot be reached",
}
"""What each error status of the service API means."""


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a service route for these error statuses."""
    return error_responses(WHY, *codes)


def unreadable_photo(exc: Exception) -> HTTPException:
    """The 415 for an uploaded photo the reader cannot decode, saying why in the words of
    :class:`vision.ImageError` (which names in-memory data ``<bytes>``: here, "the photo")."""
    reason = re.sub(r": <bytes>$", "", str(exc)).replace("<bytes>", "the photo")
    reason = reason.removeprefix("cannot read the photo: ")
    return HTTPException(415, f"dicecam cannot read this photo: {reason}")
