"""Service settings, read from ``DICECAM_*`` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """Everything has a default: ``dicecam serve`` needs no configuration."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path.home() / ".dicecam"
    max_upload_mb: float = 20.0


def get_settings() -> Settings:
    return Settings()
