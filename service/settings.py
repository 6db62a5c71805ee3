"""Service settings, read from ``DICECAM_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.host_guard import check_allowed_host

__all__ = ["Settings", "get_settings"]


def _folder(path: Path) -> Path:
    """A folder dicecam may make: refused when a file is already there."""
    if path.expanduser().exists() and not path.expanduser().is_dir():
        raise ValueError(f"expected a folder, got {str(path)!r}, which is a file")
    return path


def _file(path: Path) -> Path:
    """A file dicecam may make: refused when a folder is already there."""
    if path.expanduser().is_dir():
        raise ValueError(f"expected a file, got {str(path)!r}, which is a folder")
    return path


def _host(host: str) -> str:
    """An address or name to listen on; an empty one would listen on every interface."""
    if not host.strip() or any(c.isspace() for c in host):
        raise ValueError(
            f"expected an address or host name to listen on, such as 127.0.0.1 or 0.0.0.0, "
            f"got {host!r}"
        )
    return host


def _tracker_url(url: str) -> str:
    """A tracker's base URL, ``http(s)://host[:port][/path]``, without its trailing slash."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"expected a tracker URL starting with http:// or https://, such as "
            f"http://192.168.1.20:8000/tracker, got {url!r}"
        )
    return url.strip().rstrip("/")


def _zone(name: str) -> str:
    """An IANA time zone name a player may pick, as the tracker takes it (not 'localtime')."""
    from service.tracker.rules import zone_to_pick

    zone_to_pick(name)  # InvalidTimezone is a ValueError naming what was expected
    return name


def _database_url(url: str) -> str:
    """A tracker database URL the tracker can open (SQLite or PostgreSQL)."""
    from service.tracker.db import database_url_of

    database_url_of(url)
    return url


Folder = Annotated[Path, AfterValidator(_folder)]
File = Annotated[Path, AfterValidator(_file)]


class Settings(BaseSettings):
    """Everything has a default: ``dicecam serve`` needs no configuration."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    host: Annotated[str, AfterValidator(_host)] = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    data_dir: Folder = Path.home() / ".dicecam"
    max_upload_mb: float = Field(20.0, gt=0, allow_inf_nan=False)
    tracker: bool = True
    """Mount the embedded Morning Roll tracker at ``/tracker`` (``dicecam serve --no-tracker``)."""
    tracker_url: Annotated[str, AfterValidator(_tracker_url)] | None = None
    """Submit Morning Roll turns to this tracker instead of the embedded one."""
    tracker_database_url: Annotated[str, AfterValidator(_database_url)] | None = None
    """Tracker database (``postgresql+psycopg://...``); default: SQLite file in ``data_dir``."""
    tracker_admin_name: str | None = None
    tracker_admin_password: str | None = None
    """With ``tracker_admin_name``: the tracker creates (or promotes) this administrator."""
    tracker_admin_timezone: Annotated[str, AfterValidator(_zone)] = "UTC"
    tracker_new_password: str | None = None
    """The new password of ``dicecam tracker --reset-password NAME`` (else it asks for it)."""
    tracker_token: str | None = None
    """Bearer token the client uses to submit turns (``dicecam submit``/``outbox``)."""
    tracker_token_days: int = Field(365, ge=1, le=36500)
    """How long a bearer token of the tracker (``POST /api/v1/tokens``) lasts, in days."""
    tracker_login_failures_per_address: int = Field(20, ge=0, le=1_000_000)
    """Wrong passwords (for any names) from one client address in 15 minutes before the
    tracker's logins from it wait, 429 (``DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS``; 0: no
    limit). A name also waits after 5 of its own from one address, and after 50 from all."""
    tracker_registrations_per_address: int = Field(10, ge=0, le=1_000_000)
    """Players registered from one client address in an hour before the tracker's
    registrations from it wait, 429 (``DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS``; 0: no
    limit)."""
    keep_photos_days: int = Field(365, ge=0, le=36500)
    """How long the tracker keeps each roll's photo, in days after the turn's day
    (``DICECAM_KEEP_PHOTOS_DAYS``; 0: for good). The turn, its values and readings stay."""
    outbox_retry_s: float = Field(30.0, ge=0, allow_inf_nan=False)
    """How often the service tries again the Morning Roll turns it queued while the tracker was
    down (``DICECAM_OUTBOX_RETRY_S``; each turn also backs off on its own; 0: never, leave them
    to ``dicecam outbox deliver``)."""
    live_settle_frames: int = Field(3, ge=1, le=100)
    """Live mode: identical consecutive readings before the page takes a roll."""
    calibration: File | None = None
    """A fixed camera's boundary polygon (``DICECAM_CALIBRATION``, as ``dicecam calibrate``);
    default ``data_dir / "calibration.json"``."""
    missing_dice: Literal["bust", "ask"] = "bust"
    """A Morning Roll photo with fewer dice than rolled: ``bust`` the turn, or ``ask`` the
    player to retake the photo or type the values (``DICECAM_MISSING_DICE``)."""

    turns_database: File | None = None
    """SQLite file of the turns in progress (``DICECAM_TURNS_DATABASE``); default
    ``data_dir / "turns.sqlite3"``, their photos in ``turn-photos/`` beside it."""

    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    """More ``Host`` names the service answers to (``DICECAM_ALLOWED_HOSTS``, a comma list:
    names, IP addresses, ``*.domain``; ``*``: any), e.g. behind a reverse proxy or at a domain.
    The defaults follow ``host``: see :meth:`service.host_guard.HostPolicy.for_bind`."""

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_allowed_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",") if value.strip() else []
        if isinstance(value, (list, tuple)):
            return tuple(check_allowed_host(str(v)) for v in value)
        return value

    def turns_database_file(self) -> Path:
        """Where turns are saved: ``turns_database``, else ``data_dir/turns.sqlite3``."""
        if self.turns_database is not None:
            return Path(self.turns_database).expanduser()
        return Path(self.data_dir).expanduser() / "turns.sqlite3"

    def calibration_file(self) -> Path:
        """Where the calibration lives: ``calibration``, else ``data_dir/calibration.json``."""
        if self.calibration is not None:
            return Path(self.calibration).expanduser()
        return Path(self.data_dir).expanduser() / "calibration.json"


def get_settings() -> Settings:
    return Settings()
