"""The versioned HTTP API: ``/api/v1/...`` (``/api/read`` is kept as a short alias)."""

from __future__ import annotations

from fastapi import APIRouter

from service.api import calibration, reading, sheets, tracker_login, turns
from service.api.errors import ErrorBody, errors
from service.api.reader import ReaderService

__all__ = ["ErrorBody", "ReaderService", "build_api_router", "errors"]


def build_api_router() -> APIRouter:
    """All API routes under ``/api/v1``, plus ``POST /api/read``."""
    api = APIRouter(responses=errors(500))  # the service answers any crash as an ErrorBody
    v1 = APIRouter(prefix="/api/v1")
    v1.include_router(reading.router)
    v1.include_router(turns.router)
    v1.include_router(sheets.router)
    v1.include_router(calibration.router)
    v1.include_router(tracker_login.router)
    api.include_router(v1)
    api.add_api_route(
        "/api/read",
        reading.read_photo,
        methods=["POST"],
        summary="Read the dice in a photo (alias of /api/v1/read)",
        openapi_extra=reading.PHOTO_BODY,
        responses=errors(400, 408, 413, 415, 422, 503),
        tags=["reading"],
    )
    return api
