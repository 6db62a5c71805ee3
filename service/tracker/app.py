"""``create_app``: the complete tracker as one FastAPI application."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from service.body_limit import BodyLimitMiddleware
from service.host_guard import guard_hosts
from service.http_errors import (
    answer_http_errors,
    describe_validation_errors,
    not_json_body,
    validation_status,
)
from service.logs import CrashLog, RefusalLog
from service.security_headers import SecurityHeadersMiddleware
from service.tracker import accounts_api, api, forms, pages, password_form, store
from service.tracker.db import Database, default_database_url, migrate
from service.tracker.throttle import (
    REGISTRATION_WINDOW,
    WINDOW,
    AddressLimit,
    LoginGuard,
    TooManyTries,
    new_relay_key,
)

__all__ = ["create_app"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def create_app(
    database_url: str | None = None,
    *,
    clock: Callable[[], datetime] | None = None,
    token_days: int | None = None,
    keep_photos_days: int | None = None,
    retention_every_s: float | None = None,
    bind: str | None = None,
    login_failures_per_address: int | None = None,
    registrations_per_address: int | None = None,
) -> FastAPI:
    """The Morning Roll tracker: JSON API under ``/api/v1`` and HTML pages.

    ``database_url`` defaults to ``DICECAM_TRACKER_DATABASE_URL`` or a SQLite file under
    ``Settings().data_dir``; migrations run here. ``clock`` returns the server's aware time
    (tests inject one). ``token_days``: how long a bearer token lasts (default
    ``DICECAM_TRACKER_TOKEN_DAYS``, 365). ``keep_photos_days``: how long each roll's photo is
    kept after its turn's day (default ``DICECAM_KEEP_PHOTOS_DAYS``, 365; 0: for good), pruned
    at start and every ``retention_every_s`` (an hour; :mod:`service.retention`; a mounted
    tracker's pruning is in ``app.state.retention``, for the app mounting it to run). Mountable
    under a prefix: ``app.mount("/tracker", create_app())``. ``bind``: the host ``dicecam
    tracker`` serves it on, on its own: the Host header is checked (``DICECAM_ALLOWED_HOSTS``)
    and each refusal logged with why; mounted (None), the service around it does both.
    ``app.state.relay_key``: sent by a service mounting it, the address of that service's client
    counts for the limits per address instead of the service's own
    (:mod:`service.tracker.throttle`).

    Example:
        >>> app = create_app("sqlite://")  # a private database (a temporary file) for this app
        >>> app.title
        'Morning Roll tracker'
    """
    days = _token_days() if token_days is None else token_days
    if not 1 <= days <= 36500:
        raise ValueError(f"expected token_days from 1 to 36500, got {days}")
    db = Database(database_url or default_database_url())
    migrate(db.engine)
    app = FastAPI(title="Morning Roll tracker", version="1")
    app.state.db = db
    app.state.engine = db.engine
    app.state.sessionmaker = db.writer
    app.state.clock = clock or _utcnow
    app.state.relay_key = new_relay_key()  # for the service mounting it: never logged
    _limit_addresses(app, login_failures_per_address, registrations_per_address)
    app.state.token_days = days
    _bootstrap_admin(app)
    _keep_photos(app, keep_photos_days, retention_every_s)

    @app.exception_handler(store.TrackerError)
    async def _tracker_error(request: Request, exc: store.TrackerError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if isinstance(exc, TooManyTries):
            headers = {"Retry-After": str(exc.retry_after)}
        return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)

    answer_http_errors(app, page=pages.error_page)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        detail, status = describe_validation_errors(errors), validation_status(errors)
        if wrong_type := not_json_body(errors, request.headers.get("content-type", "")):
            detail, status = wrong_type, 415
        path = request.scope["path"].removeprefix(request.scope.get("root_path", ""))
        if not path.startswith("/api/"):  # a page or a form: a person reads the answer
            return pages.error_page(request, detail, status)
        return JSONResponse({"detail": detail}, status_code=status)

    limit = int(_max_body_mb() * 2**20)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=limit,
        detail=f"expected a request of at most {limit} bytes (DICECAM_MAX_UPLOAD_MB), "
        "got a larger one",
    )
    if bind is not None:  # DNS rebinding (400), cross-site writes (403): as the service's
        guard_hosts(app, bind, _allowed_hosts())
    app.add_middleware(SecurityHeadersMiddleware)  # nosniff, no framing, CSP (pages: stricter)
    if bind is not None:
        app.add_middleware(RefusalLog)  # a line saying why for each refusal
    # outermost: a crash, of a route or of a layer above, is logged with an error id and
    # answered 500 with that id alone, with the security headers (CrashLog's own)
    app.add_middleware(CrashLog)
    app.include_router(accounts_api.router)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(forms.router)
    app.include_router(password_form.router)
    return app


def _max_body_mb() -> float:
    from service.settings import Settings

    return float(Settings().max_upload_mb)


def _allowed_hosts() -> list[str]:
    from service.settings import Settings

    return list(Settings().allowed_hosts)


def _token_days() -> int:
    from service.settings import Settings

    return Settings().tracker_token_days


def _limit_addresses(app: FastAPI, logins: int | None, registrations: int | None) -> None:
    """``app.state.login_guard`` (wrong passwords per name and per address) and
    ``app.state.registrations`` (players registered per address), their limits per address
    ``logins`` and ``registrations`` (defaults from the settings; 0: none)."""
    from service.settings import Settings

    if logins is None or registrations is None:
        settings = Settings()
        logins = settings.tracker_login_failures_per_address if logins is None else logins
        if registrations is None:
            registrations = settings.tracker_registrations_per_address
    per_address = AddressLimit(
        logins, WINDOW, "wrong passwords", "DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS"
    )
    app.state.login_guard = LoginGuard(per_address=per_address)
    app.state.registrations = AddressLimit(
        registrations,
        REGISTRATION_WINDOW,
        "registrations",
        "DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS",
    )


def _keep_photos(app: FastAPI, days: int | None, every_s: float | None) -> None:
    """Prune the photos older than ``days`` (default ``DICECAM_KEEP_PHOTOS_DAYS``) at start and
    every ``every_s`` seconds: ``app.state.retention`` holds the pass."""
    from service.retention import EVERY_S, prune_tracker_photos, schedule
    from service.settings import Settings

    days = Settings().keep_photos_days if days is None else days
    if days < 0:
        raise ValueError(f"expected keep_photos_days of 0 (for good) or more, got {days}")
    db, clock = app.state.db, app.state.clock
    app.state.retention = [lambda: prune_tracker_photos(db, clock().date(), days)] if days else []
    schedule(app, app.state.retention, EVERY_S if every_s is None else every_s)


def _bootstrap_admin(app: FastAPI) -> None:
    """``DICECAM_TRACKER_ADMIN_NAME`` + ``..._PASSWORD`` create (or promote) an administrator."""
    from service.settings import Settings

    settings = Settings()
    name = getattr(settings, "tracker_admin_name", None)
    password = getattr(settings, "tracker_admin_password", None)
    if not (name and password):
        return
    tz = getattr(settings, "tracker_admin_timezone", "UTC")
    try:
        with app.state.db.writing() as session:
            store.ensure_admin(session, name, password, tz, app.state.clock())
            session.commit()
    except ValidationError as exc:
        raise ValueError(
            "DICECAM_TRACKER_ADMIN_NAME, _PASSWORD or _TIMEZONE: "
            + describe_validation_errors(exc.errors())
        ) from None
