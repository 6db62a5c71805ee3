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
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from service.api.errors import errors, unreadable_photo
from service.api.reading import photo_admitted
from service.api.uploads import PHOTO_BODY, parse_roll_input

__all__ = ["CalibrationIn", "check_polygon", "router"]

router = APIRouter(prefix="/calibration", tags=["calibration"])

MAX_POINTS = 64


class CalibrationIn(BaseModel):
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


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _segments_cross(
    p1: tuple[float, float],
    p2: tuple[float, float],
    q1: tuple[float, float],
    q2: tuple[float, float],
) -> bool:
    """True when the segments p1-p2 and q1-q2 cross at a point inside both (proper crossing)."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def check_polygon(points: list[list[float]], width: int, height: int) -> list[tuple[float, float]]:
    """The polygon as (x, y) pixels, or ValueError saying what is wrong with it: fewer than 3
    or more than 64 points, a point outside the ``width`` x ``height`` image, repeated points,
    edges that cross, or too small an area (under 0.5% of the image)."""
    if len(points) < 3:
        raise ValueError(f"expected at least 3 boundary points, got {len(points)}")
    if len(points) > MAX_POINTS:
        raise ValueError(f"expected at most {MAX_POINTS} boundary points, got {len(points)}")
    pts: list[tuple[float, float]] = []
    for k, p in enumerate(points, 1):
        if len(p) != 2:
            raise ValueError(f"point {k}: expected [x, y], got {p!r}")
        x, y = float(p[0]), float(p[1])
        if not (0 <= x <= width and 0 <= y <= height):
            raise ValueError(
                f"point {k} ({x:g}, {y:g}) lies outside the {width}x{height} image "
                f"(expected 0 <= x <= {width} and 0 <= y <= {height})"
            )
        pts.append((x, y))
    if len({(round(x, 1), round(y, 1)) for x, y in pts}) != len(pts):
        raise ValueError("expected distinct boundary points, got the same point twice")
    n = len(pts)
    for i in range(n):
        for j in range(i + 1, n):
            if j == i + 1 or (i == 0 and j == n - 1):
                continue  # neighbouring edges share a corner
            if _segments_cross(pts[i], pts[(i + 1) % n], pts[j], pts[(j + 1) % n]):
                raise ValueError(
                    f"the boundary crosses itself (edges {i + 1}-{i + 2} and "
                    f"{j + 1}-{(j + 1) % n + 1}); expected the corners in order around the surface"
                )
    area = 0.5 * abs(
        sum(_cross((0.0, 0.0), a, b) for a, b in zip(pts, pts[1:] + pts[:1], strict=True))
    )
    share = area / (width * height)
    if share < 0.005:
        raise ValueError(
            f"expected a boundary enclosing some of the image, got {share:.2%} of it "
            "(points on a line, or too close together)"
        )
    for k in range(n):  # a corner where the boundary runs back along the edge it came by
        a, b, c = pts[k - 1], pts[k], pts[(k + 1) % n]
        u, v = (b[0] - a[0], b[1] - a[1]), (c[0] - b[0], c[1] - b[1])
        dot = u[0] * v[0] + u[1] * v[1]
        if dot < 0 and abs(u[0] * v[1] - u[1] * v[0]) <= 1e-6 * -dot:
            raise ValueError(
                f"the boundary turns back along itself at point {k + 1} ({b[0]:g}, {b[1]:g}); "
                "expected the corners in order around the surface"
            )
    return pts


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
    "", summary="Store the boundary of the playing surface", responses=errors(400, 413, 422)
)
async def put_calibration(request: Request, body: CalibrationIn) -> dict[str, Any]:
    """A polygon in pixels of a ``width`` x ``height`` image; the reader uses it from the next
    read on, for any resolution of the same camera view."""
    from vision.table import Calibration, CalibrationError

    try:
        pts = check_polygon(body.points, body.width, body.height)
        cal = Calibration.from_pixels(pts, body.width, body.height, image=body.image)
    except (ValueError, CalibrationError) as exc:
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
    responses=errors(400, 413, 422),
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


_model_lock = threading.Lock()
_models: dict[str, Any] = {}


def _surface_model() -> Any:
    from vision.table import DEFAULT_SURFACE_MODEL, SurfaceModel, SurfaceModelError, TableSettings

    setting = TableSettings().surface_model
    path = Path(setting) if setting else DEFAULT_SURFACE_MODEL
    with _model_lock:
        if str(path) not in _models:
            try:
                _models[str(path)] = SurfaceModel(path)
            except SurfaceModelError as exc:
                raise HTTPException(
                    503, f"no learned outline to propose ({exc}); tap the corners instead"
                ) from None
        return _models[str(path)]


def _propose(photo: bytes) -> dict[str, Any]:
    from vision.io import ImageError, load_image

    try:
        img = load_image(photo)
    except ImageError as exc:
        raise unreadable_photo(exc) from None
    outline = _surface_model().outline(img.rgb, (img.width, img.height))
    if outline is None:
        note = "no edge seen: the surface fills the frame (every die counts as on it)"
    elif not outline:
        note = "no playing surface found: tap the corners of the surface"
    else:
        note = f"the learned outline ({len(outline)} corners): adjust it, then save"
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
    frame; []: none found), whatever calibration is stored."""
    async with photo_admitted(request):
        roll = await parse_roll_input(request, photo_required=True)
        assert roll.photo is not None
        return await request.app.state.reader.queue.run(_propose, roll.photo)
