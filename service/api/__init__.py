"""The versioned HTTP API: ``/api/v1/...`` (``/api/read`` is kept as a short alias)."""

from __future__ import annotations

from fastapi import APIRouter

from service.api import calibration, reading, turns
from service.api.reader import ReaderService
from service.api.uploads import UploadLimitMiddleware

__all__ = ["ReaderService", "UploadLimitMiddleware", "build_api_router"]


def build_api_router() -> APIRouter:
    """All API routes under ``/api/v1``, plus ``POST /api/read``."""
    api = APIRouter()
    v1 = APIRouter(prefix="/api/v1")
    v1.include_router(reading.router)
    v1.include_router(turns.router)
    v1.include_router(calibration.router)
    api.include_router(v1)
    api.add_api_route(
        "/api/read",
        reading.read_photo,
        methods=["POST"],
        summary="Read the dice in a photo (alias of /api/v1/read)",
        openapi_extra=reading.PHOTO_BODY,
        tags=["reading"],
    )
    return api
