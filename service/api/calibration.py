"""Calibration endpoints: a fixed camera's playing-surface boundary, set from the page.

- ``GET /api/v1/calibration``: the stored boundary (``{"calibration": null}`` when none).
- ``PUT`` (or ``POST``) ``/api/v1/calibration``: store a polygon given in image pixels.
- ``DELETE /api/v1/calibration``: back to the learned outline.
- ``POST /api/v1/calibration/proposal``: a photo -> the learned outline, to start from.

The boundary is the file of ``dicecam calibrate`` (``DICECAM_CALIBRATION``, default
``<data dir>/calibration.json``); the reader uses it from the next read on.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from service.api.errors import errors, unreadable_photo
from service.api.reader import model_threads
from service.api.reading import photo_admitted
from service.api.uploads import PHOTO_BODY, parse_roll_input
from service.http_errors import StrictBody

__all__ = ["CalibrationIn", "router"]

router = APIRouter(prefix="/calibration", tags=["calibration"])

MAX_POINTS = 64
"""vision.table.calibration.MAX_POINTS, for the schema: importing vision.table here would load
the reader's modules (1.5 s) at the service's start."""


class CalibrationIn(StrictBody):
    points: list[list[float]] = Field(
        ...,
        description="boundary corners [[x, y], ...] in pixels of the image, in order around",
        json_schema_extra={
            "minItems": 3,
            "maxItems": MAX_POINTS,
            "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        },
    )
    width: int = Field(..., gt=0, le=100_000, description="width of the image the points are on")
    height: int = Field(..., gt=0, le=100_000, description="height of the image")
    image: str | None = Field(None, max_length=300, description="the photo's name, for the record")


def _view(request: Request) -> dict[str, Any]:
    svc = request.app.state.reader
    cal = svc.calibration()
    return {
        "calibration": None if cal is None else cal.to_dict(),
        "source": "calibration" if cal is not None else "learned outline",
        "path": str(svc.calibration_path),
        "error": svc.calibration_error,
    }


def _path(request: Request) -> Path:
    path = request.app.state.reader.calibration_path
    if path is None:
        raise HTTPException(500, "this service has no calibration file configured")
    return path


_write_lock = threading.Lock()


@router.get("", summary="The stored boundary of the playing surface")
async def get_calibration(request: Request) -> dict[str, Any]:
    """``calibration`` holds normalised points (0..1 of the photo's width and height), or null
    when none is stored and the reader uses the learned outline."""
    return await run_in_threadpool(_view, request)


@router.put(
    "", summary="Store the boundary of the playing surface", responses=errors(400, 413, 415, 422)
)
async def put_calibration(request: Request, body: CalibrationIn) -> dict[str, Any]:
    """A polygon in pixels of a ``width`` x ``height`` image; the reader uses it from the next
    read on, for photos of that shape at any resolution (others get the learned outline)."""
    from vision.table import Calibration, CalibrationError

    try:  # the checks of `dicecam calibrate` (vision.table.check_polygon)
        cal = Calibration.from_pixels(body.points, body.width, body.height, image=body.image)
    except CalibrationError as exc:
        raise HTTPException(422, f"cannot use this boundary: {exc}") from None
    path = _path(request)

    def save() -> dict[str, Any]:
        with _write_lock:
            cal.save(path)
            request.app.state.reader.calibration_changed()
        return _view(request)

    return await run_in_threadpool(save)


router.add_api_route(
    "",
    put_calibration,
    methods=["POST"],
    summary="Store the boundary of the playing surface (same as PUT)",
    responses=errors(400, 413, 415, 422),
)


@router.delete("", summary="Remove the stored boundary: back to the learned outline")
async def delete_calibration(request: Request) -> dict[str, Any]:
    from vision.table import Calibration

    path = _path(request)

    def clear() -> dict[str, Any]:
        with _write_lock:
            removed = Calibration.clear(path)
            request.app.state.reader.calibration_changed()
        return {"removed": removed, **_view(request)}

    return await run_in_threadpool(clear)


def _surface_model() -> Any:
    """The outline model to propose with: the learned outline of the service's reader (its
    file, certainty gate and threads), loaded once per process
    (:func:`vision.model_files.kept_model`); 503 saying why when there is none."""
    from vision.table import (
        DEFAULT_SURFACE_MODEL,
        SurfaceModelError,
        TableSettings,
        learned_outline,
    )

    if TableSettings().surface_model == "none":
        raise HTTPException(
            503, "no learned outline to propose (DICECAM_SURFACE_MODEL is none); tap the corners"
        )
    try:
        model = learned_outline(threads=model_threads())
    except SurfaceModelError as exc:
        raise HTTPException(
            503, f"no learned outline to propose ({exc}); tap the corners instead"
        ) from None
    if model is None:  # an install without the shipped outline model
        raise HTTPException(
            503,
            f"no learned outline to propose (surface model not found: {DEFAULT_SURFACE_MODEL}); "
            "tap the corners instead",
        )
    return model


def _propose(photo: bytes) -> dict[str, Any]:
    from vision.io import ImageError, load_image

    try:
        img = load_image(photo)
    except ImageError as exc:
        raise unreadable_photo(exc) from None
    found = _surface_model().find(img.rgb, (img.width, img.height))
    outline = found.outline
    if outline is None:
        note = found.note
    elif not outline:
        note = f"{found.note}: tap the corners of the surface"
    else:
        note = f"{found.note}: adjust it, then save"
    return {
        "width": img.width,
        "height": img.height,
        "outline": None if outline is None else [[round(x, 1), round(y, 1)] for x, y in outline],
        "note": note,
    }


@router.post(
    "/proposal",
    summary="The learned outline of a photo, to start from",
    openapi_extra=PHOTO_BODY,
    responses=errors(400, 408, 413, 415, 422, 503),
)
async def propose(request: Request) -> dict[str, Any]:
    """A photo (multipart ``photo``) -> ``outline`` in its pixels (null: the surface fills the
    frame; []: none found, or the outline model is unsure of the photo: ``note`` says which),
    whatever calibration is stored."""
    async with photo_admitted(request):
        roll = await parse_roll_input(request, photo_required=True)
        assert roll.photo is not None
        return await request.app.state.reader.queue.run(_propose, roll.photo)
