"""The dicecam FastAPI app: camera page at ``/``, API at ``/api/v1``, tracker at ``/tracker``.

Example:
    >>> from service.app import create_app
    >>> app = create_app()  # uvicorn.run(app) serves it; `dicecam serve` does just that
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from service.api import ReaderService, build_api_router
from service.body_limit import BodyLimitMiddleware
from service.host_guard import guard_hosts
from service.http_errors import (
    answer_http_errors,
    describe_validation_errors,
    not_json_body,
    validation_status,
)
from service.logs import CrashLog, RefusalLog
from service.retention import EVERY_S, schedule, slim_delivered
from service.security_headers import SecurityHeadersMiddleware
from service.settings import Settings
from service.sheet_store import open_sheet_store
from service.turn_store import TurnStore
from service.turns import Submitter

__all__ = ["create_app"]

log = logging.getLogger("dicecam.service")
STATIC = Path(__file__).parent / "static"
_DEFAULT: Any = object()


def _default_tracker_app(settings: Settings) -> Any | None:
    if not settings.tracker or settings.tracker_url:
        return None
    try:
        from service.tracker import create_app as create_tracker_app
    except ImportError as exc:
        log.warning("embedded tracker not available: %s", exc)
        return None
    url = getattr(settings, "tracker_database_url", None) or (
        f"sqlite:///{Path(settings.data_dir).expanduser() / 'tracker.sqlite3'}"
    )
    return create_tracker_app(url)


def _turns_database(settings: Settings) -> Any | None:
    """The SQLite file turns are saved to; None (turns in memory only, with a warning) when it
    cannot be opened, so that a read-only data dir does not stop the service."""
    from service.turn_db import TurnDatabase

    path = settings.turns_database_file()
    try:
        return TurnDatabase(path, path.parent / "turn-photos")
    except Exception as exc:
        log.warning("turns are kept in memory only: cannot open %s (%s)", path, exc)
        return None


def create_app(
    settings: Settings | None = None,
    *,
    reader: Any | None = None,
    tracker_app: Any = _DEFAULT,
    submitter: Submitter | None = _DEFAULT,
    retention_every_s: float | None = None,
) -> FastAPI:
    """Build the service. ``reader`` replaces the shipped :class:`vision.DiceReader` (tests);
    ``tracker_app=None`` mounts no tracker; ``submitter`` receives finished Morning Roll turns;
    the retention passes (day-old games swept, outbox and tracker pruned) run at start and
    every ``retention_every_s`` (an hour: :mod:`service.retention`).
    """
    settings = settings or Settings()
    app = FastAPI(
        title="dicecam",
        version="1",
        summary="Read physical dice from photos, score and advise, play Morning Roll turns.",
        docs_url=None,  # Swagger UI and ReDoc load from a CDN: the schema is at /openapi.json
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.reader = ReaderService(
        reader=reader,
        calibration_path=settings.calibration_file(),
        missing_is_bust=settings.missing_dice == "bust",
    )
    if submitter is _DEFAULT:
        from service.api.submit import TrackerSubmitter

        submitter = TrackerSubmitter(
            Path(settings.data_dir).expanduser() / "outbox",
            embedded=not settings.tracker_url,
            listen=(settings.host, settings.port),
            retry_s=settings.outbox_retry_s,
        )
    app.state.turns = TurnStore(submitter=submitter, database=_turns_database(settings))
    if settings.outbox_retry_s > 0 and callable(getattr(submitter, "retry", None)):
        from service.api.submit import Every

        retries = Every(settings.outbox_retry_s, app.state.turns.retry_queued, name="outbox")
        app.router.add_event_handler("startup", retries.start)
        app.router.add_event_handler("shutdown", retries.stop)
    if app.state.turns.database is not None:
        app.router.add_event_handler("shutdown", app.state.turns.database.dispose)
    app.state.sheets = open_sheet_store(settings)  # Solitaire Dice sheets, Low-High turns
    app.router.add_event_handler("shutdown", app.state.sheets.close)

    max_bytes = int(settings.max_upload_mb * 1_000_000)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=max_bytes,
        prefix="/api/",  # the mounted tracker keeps its own limit
        detail=f"upload too large: the limit is {settings.max_upload_mb:g} MB "
        "(DICECAM_MAX_UPLOAD_MB); send a smaller photo",
    )

    # DNS rebinding (400) and cross-site writes (403), for the mounted tracker too; its
    # refusals carry the security headers
    guard_hosts(app, settings.host, settings.allowed_hosts)
    app.add_middleware(SecurityHeadersMiddleware)  # nosniff, no framing, CSP
    app.add_middleware(RefusalLog)  # a line saying why for each refusal, the tracker's too
    # outermost: a crash, of a route or of a layer above, is logged with an error id and
    # answered 500 with that id alone, with the security headers (CrashLog's own)
    app.add_middleware(CrashLog)

    answer_http_errors(app)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if wrong_type := not_json_body(errors, request.headers.get("content-type", "")):
            return JSONResponse({"detail": wrong_type}, status_code=415)
        return JSONResponse(
            {"detail": describe_validation_errors(errors)}, status_code=validation_status(errors)
        )

    app.include_router(build_api_router())

    @app.get("/api/v1/health", tags=["service"], summary="Is the service up")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "reader": app.state.reader.status(),
            "tracker": "embedded" if mounted else (settings.tracker_url or None),
        }

    @app.get("/api/v1/config", tags=["service"], summary="What the camera page needs to know")
    async def config() -> dict[str, Any]:
        from scoring import GAME_NAMES

        return {
            "games": list(GAME_NAMES),
            "max_upload_mb": settings.max_upload_mb,
            "live_settle_frames": settings.live_settle_frames,
            "outbox_retry_s": settings.outbox_retry_s,
            "missing_dice": settings.missing_dice,
        }

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    if tracker_app is _DEFAULT:
        tracker_app = _default_tracker_app(settings)
    mounted = tracker_app is not None
    app.state.tracker_mounted = mounted
    # the camera page's logins count under the phone's address, relayed with this key
    app.state.tracker_relay_key = getattr(getattr(tracker_app, "state", None), "relay_key", None)
    if mounted:
        app.mount("/tracker", tracker_app, name="tracker")
    # a mounted app's start and stop do not run: its retention passes run with this one's
    outbox = Path(settings.data_dir).expanduser() / "outbox"
    retention = [app.state.turns.sweep, app.state.sheets.sweep]
    retention += getattr(getattr(tracker_app, "state", None), "retention", [])
    every_s = EVERY_S if retention_every_s is None else retention_every_s
    schedule(app, retention, every_s, at_start=[partial(slim_delivered, outbox)])
    return app
