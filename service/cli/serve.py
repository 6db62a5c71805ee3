"""``dicecam serve``: the camera page, the API and (by default) the Morning Roll tracker."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from service.cli import UsageError, check_port, use_colors

__all__ = ["register", "run"]


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
    p.add_argument("--port", type=int, help="port (default DICECAM_PORT, else 8000)")
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
        help="submit Morning Roll turns to this remote tracker (default DICECAM_TRACKER_URL)",
    )
    p.add_argument(
        "--data-dir",
        help="where the certificate, the tracker and turn databases, the outbox and the "
        "calibration live (default DICECAM_DATA_DIR, else ~/.dicecam)",
    )
    p.add_argument(
        "--max-upload-mb",
        type=float,
        help="largest accepted upload (default DICECAM_MAX_UPLOAD_MB, else 20)",
    )
    p.add_argument(
        "--model",
        type=Path,
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

    from pydantic import ValidationError

    from vision.config import VisionSettings

    if flag is not None:
        source, model = "--model", flag
    else:
        try:
            settings = VisionSettings()
        except ValidationError:  # another DICECAM_* setting: the reader names it at the first photo
            return
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
    except ValueError:  # another DICECAM_* setting: the reader names it at the first photo
        pass
    if flag is not None:
        os.environ["DICECAM_MODEL"] = str(flag.resolve())


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
    try:  # turns, the outbox and the tracker all live there
        Path(settings.data_dir).expanduser().mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot use the data dir {settings.data_dir}: {exc}") from None

    import uvicorn

    from service.app import create_app

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
    scheme = "https" if ssl else "http"
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    print(f"dicecam: serving {scheme}://{shown}:{settings.port}/", flush=True)
    try:
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_level="info",
            use_colors=use_colors(),
            **ssl,
        )
    except OSError as exc:
        raise UsageError(f"cannot listen on {settings.host}:{settings.port}: {exc}") from None
    return 0
