"""``dicecam serve``: the camera page, the API and (by default) the Morning Roll tracker."""

from __future__ import annotations

import argparse
import math
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.cli import UsageError, check_port, use_colors
from service.cli._serve_lock import LOCK_NAME, serve_lock

if TYPE_CHECKING:
    from service.settings import Settings

__all__ = ["check_data_dir", "held_port", "lock_files", "register", "run", "run_uvicorn"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the camera page, the reading/scoring API and the tracker",
        description="Serve the camera page at /, the API at /api/v1 (schema at /openapi.json) "
        "and the embedded Morning Roll tracker at /tracker. Settings: DICECAM_* variables.",
    )
    p.add_argument(
        "--host",
        help="address to listen on (default DICECAM_HOST, else 127.0.0.1; 0.0.0.0 for phones)",
    )
    p.add_argument(
        "--port",
        type=int,
        help="port (default DICECAM_PORT, else 8000; 0: a free one, said in the line 'serving ...')",
    )
    p.add_argument(
        "--https",
        action="store_true",
        help="serve TLS with a self-signed certificate made in the data dir (phones need it "
        "for the camera); implies --host 0.0.0.0 unless --host or DICECAM_HOST is given",
    )
    p.add_argument(
        "--no-tracker",
        action="store_true",
        help="do not mount the embedded tracker (as DICECAM_TRACKER=0)",
    )
    p.add_argument(
        "--tracker-url",
        metavar="URL",
        help="submit Morning Roll turns to this remote tracker (default DICECAM_TRACKER_URL, "
        "else the embedded one)",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where the certificate, the tracker and turn databases, the outbox and the "
        "calibration live (default DICECAM_DATA_DIR, else ~/.dicecam)",
    )
    p.add_argument(
        "--max-upload-mb",
        type=float,
        metavar="MB",
        help="largest photo or request taken, in megabytes (default DICECAM_MAX_UPLOAD_MB, "
        "else 20)",
    )
    p.add_argument(
        "--model",
        type=Path,
        metavar="PATH",
        help="reader model (.onnx), e.g. a fine-tuned runs/finetune/NAME-ft.onnx, with the "
        "models beside it (default DICECAM_MODEL, else the shipped one)",
    )
    p.set_defaults(func=run)


def _check_model(flag: Path | None) -> None:
    """Say now, in one line, that ``--model`` or ``DICECAM_MODEL`` names no model the reader can
    load (no file, a folder, a ``.pt`` checkpoint, a corrupt file, another kind of model such as
    the outline model): the reader loads at the first photo, and until then the service looked
    well. ``--model`` is handed to that reader as ``DICECAM_MODEL``. The shipped model, when
    missing, stays a 503 at the first photo (scoring and the tracker serve without it)."""
    import os

    from vision.config import VisionSettings
    from vision.table.calibration import TableSettings

    table = TableSettings()  # a bad reader or table setting stops the start here, naming it
    settings = VisionSettings()  # (the reader reads them only at the first photo)
    _check_named_models(
        settings, table, reader=flag is None and "model" not in settings.model_fields_set
    )
    if flag is not None:
        source, model = "--model", flag
    else:
        if "model" not in settings.model_fields_set:
            return
        source, model = "DICECAM_MODEL", settings.model
    expected = f"{source} must be the reader's ONNX export, got {model}"
    if not model.exists():
        raise UsageError(f"{expected} (no such file)")
    from vision.reader import DiceReader, ModelError

    try:
        DiceReader(model, warmup=False)
    except ModelError as exc:
        raise UsageError(f"{expected}: {exc}") from None
    except ValueError as exc:  # a DICECAM_* setting this model cannot take: the reader names it
        raise UsageError(str(exc)) from None
    if flag is not None:
        os.environ["DICECAM_MODEL"] = str(flag.resolve())


def _check_named_models(vision: Any, table: Any, *, reader: bool) -> None:
    """Load now the models a ``DICECAM_*_MODEL`` variable names beside the reader's (its face
    classifier, cocked-die model and die check: with the shipped reader when ``reader``; the
    outline and off-table models): a file there that does not load stopped every photo with a
    503, the service looking well until then. The error names the variable. Each loads as the
    service's reader loads it (its threads), so the first photo reads with the models loaded
    here (:func:`vision.model_files.kept_model`) instead of loading them again."""
    from vision.reader import DiceReader, ModelError
    from vision.table import SurfaceModelError
    from vision.table.logic import learned_offtable, learned_outline

    try:
        if reader and {"faces_model", "cocked_model", "verify_model"} & vision.model_fields_set:
            DiceReader(warmup=False)
        if "surface_model" in table.model_fields_set:
            learned_outline(threads=vision.threads)
        if "offtable_model" in table.model_fields_set:
            learned_offtable(threads=vision.threads)
    except (ModelError, SurfaceModelError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from service.settings import Settings

    _check_model(args.model)
    overrides: dict[str, object] = {}
    if args.host:
        overrides["host"] = args.host
    elif args.https and "host" not in Settings().model_fields_set:  # nor DICECAM_HOST
        overrides["host"] = "0.0.0.0"
    if check_port(args.port) is not None:
        overrides["port"] = args.port
    if args.no_tracker:
        overrides["tracker"] = False
    if args.tracker_url:
        if not args.tracker_url.startswith(("http://", "https://")):
            raise UsageError(
                f"--tracker-url must start with http:// or https://, got {args.tracker_url!r}"
            )
        overrides["tracker_url"] = args.tracker_url.rstrip("/")
    if args.data_dir:
        overrides["data_dir"] = args.data_dir
    if args.max_upload_mb is not None:
        if not math.isfinite(args.max_upload_mb) or args.max_upload_mb <= 0:
            raise UsageError(f"--max-upload-mb must be positive, got {args.max_upload_mb}")
        overrides["max_upload_mb"] = args.max_upload_mb
    try:
        settings = Settings(**overrides)
    except Exception as exc:
        raise UsageError(f"bad setting: {exc}") from None
    check_data_dir(Path(settings.data_dir).expanduser())
    # --port 0: the port the system chose
    with serve_lock(lock_files(settings)) as note, held_port(settings.host, settings.port) as port:
        settings = settings.model_copy(update={"port": port})
        note(_url(settings, https=args.https))
        return _serve(args, settings)


def lock_files(settings: Settings) -> list[Path]:
    """The locks a server holds: ``serve.lock`` in its data folder, and one beside its turns
    file when that lies elsewhere (``DICECAM_TURNS_DATABASE``)."""
    folder = Path(settings.data_dir).expanduser()
    turns = settings.turns_database_file()
    files = [folder / LOCK_NAME]
    if turns.parent.resolve() != folder.resolve():
        files.append(turns.with_name(f"{turns.name}.{LOCK_NAME}"))
    return files


def _url(settings: Settings, *, https: bool) -> str:
    """Where the server answers, as it prints it."""
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    return f"{'https' if https else 'http'}://{shown}:{settings.port}/"


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    """Serve the app of ``settings`` (its port known: one :func:`held_port` holds)."""
    from service.app import create_app
    from service.logs import log_config

    ssl: dict[str, str] = {}
    if args.https:
        from service.tls import ensure_certificate, lan_addresses

        extra = [settings.host] if settings.host not in ("0.0.0.0", "::") else []
        try:
            cert, key = ensure_certificate(settings.data_dir, extra)
        except OSError as exc:
            raise UsageError(
                f"cannot make the TLS certificate in {settings.data_dir}: {exc}"
            ) from None
        ssl = {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
        print(f"dicecam: TLS certificate {cert} (self-signed: accept it once in the browser)")
        if settings.host in ("0.0.0.0", "::"):
            for addr in lan_addresses():
                print(f"dicecam: on a phone on this network open https://{addr}:{settings.port}/")
    try:
        app = create_app(settings)
    except ValueError as exc:  # e.g. DICECAM_TRACKER_ADMIN_* that would not do
        raise UsageError(str(exc)) from exc
    print(f"dicecam: serving {_url(settings, https=bool(ssl))}", flush=True)
    try:
        run_uvicorn(
            app,
            host=settings.host,
            port=settings.port,
            log_level="info",
            log_config=log_config("info"),
            use_colors=use_colors(),
            **ssl,
        )
    except SystemExit as exc:  # uvicorn could not start after all; its log says why
        return 1 if exc.code else 0
    return 0


def run_uvicorn(app: object, **config: object) -> None:
    """``uvicorn.run(app, **config)``, where a hang-up (SIGHUP: the terminal that started the
    server closed) shuts the server down as SIGTERM does: the app's shutdown runs. uvicorn
    handles SIGINT and SIGTERM only, and SIGHUP killed the server on the spot."""
    import signal

    import uvicorn

    hangup = getattr(signal, "SIGHUP", None)  # Windows has none
    if hangup is None or threading.current_thread() is not threading.main_thread():
        uvicorn.run(app, **config)
        return
    before = signal.signal(hangup, lambda signum, frame: signal.raise_signal(signal.SIGTERM))
    try:
        uvicorn.run(app, **config)
    finally:
        signal.signal(hangup, before)


def check_data_dir(folder: Path) -> None:
    """UsageError unless ``folder`` can be made and written: turns, the outbox and the tracker
    live there, and a read-only one failed at the tracker's start with a traceback."""
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise UsageError(
            f"cannot use the data dir {folder} (--data-dir or DICECAM_DATA_DIR): expected a "
            f"folder dicecam can write, got {exc.strerror or exc}"
        ) from None


@contextmanager
def held_port(host: str, port: int) -> Iterator[int]:
    """Check that ``host:port`` can be listened on, and yield the port: ``port``, or for 0 the
    free one the system chose (uvicorn was given 0 and the service said it served on port 0).
    The port stays bound to this process, not listening, until the block ends, so that nothing
    takes it before uvicorn listens on it beside (both with ``SO_REUSEADDR``, as asyncio binds).

    Raises:
        UsageError: a port in use, an address not this machine's, a name that does not
            resolve, said in one line before the service starts (uvicorn said it in its log
            after the start, with exit status 3).
    """
    import socket

    with ExitStack() as held:
        try:
            addresses = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
            for family, kind, proto, _, address in addresses:  # each, as asyncio's create_server
                sock = held.enter_context(socket.socket(family, kind, proto))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((address[0], port, *address[2:]))  # 0: the first address's choice
                port = port or int(sock.getsockname()[1])
        except OSError as exc:  # socket.gaierror too
            raise UsageError(
                f"cannot listen on {host}:{port} (--host/--port or DICECAM_HOST/DICECAM_PORT): "
                f"{exc.strerror or exc}"
            ) from None
        yield port
