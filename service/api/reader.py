"""The dice reader as the service holds it: loaded lazily, once, and never fatal."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException

__all__ = ["ReaderService"]


def _default_factory() -> Any:
    from vision import DiceReader

    return DiceReader()


def _image_error_types() -> tuple[type[BaseException], ...]:
    try:
        from vision import ImageError
    except Exception:  # vision not importable: any ValueError from the reader means a bad image
        return (ValueError,)
    return (ImageError,)


class ReaderService:
    """Holds one reader. ``read`` turns reader failures into HTTP errors a person understands.

    Example:
        >>> svc = ReaderService(reader=my_reader)
        >>> svc.read(photo_bytes).values  # doctest: +SKIP
    """

    retry_after_s = 30.0
    max_concurrent = 4
    """Reads running at once: more only share the CPU and hold more decoded photos in memory."""
    cache_size = 32
    """Recent readings by photo hash: the page reads a photo, then posts the same photo as the
    roll; the roll reuses the reading instead of running the model twice."""

    def __init__(self, reader: Any | None = None, factory: Callable[[], Any] | None = None) -> None:
        self._reader = reader
        self._factory = factory or _default_factory
        self._lock = threading.Lock()
        self._failed_at: float | None = None
        self._failure: str | None = None
        self._cache: OrderedDict[bytes, Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_concurrent)

    @property
    def loaded(self) -> bool:
        return self._reader is not None

    def status(self) -> dict[str, Any]:
        return {"loaded": self.loaded, "error": self._failure}

    def get(self) -> Any:
        if self._reader is not None:
            return self._reader
        with self._lock:
            if self._reader is not None:
                return self._reader
            if (
                self._failed_at is not None
                and time.monotonic() - self._failed_at < self.retry_after_s
            ):
                raise HTTPException(503, f"the dice reader is unavailable: {self._failure}")
            try:
                self._reader = self._factory()
            except Exception as exc:
                self._failed_at = time.monotonic()
                self._failure = f"{type(exc).__name__}: {exc}"
                raise HTTPException(
                    503,
                    f"the dice reader could not be loaded ({self._failure}); "
                    "type the values by hand meanwhile",
                ) from None
            self._failure = None
            return self._reader

    def read(self, photo: bytes, expected_dice: int | None = None) -> Any:
        """Read a photo; 415 for a file that is not an image, 500 when the reader fails."""
        key = hashlib.sha256(photo).digest()
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is not None:
            try:
                return dataclasses.replace(hit, expected_dice=expected_dice)
            except TypeError:
                return hit
        reader = self.get()
        bad_image = _image_error_types()
        try:
            with self._slots:
                result = reader.read(photo, expected_dice=expected_dice)
        except bad_image as exc:
            raise HTTPException(
                415, f"not an image dicecam can read (JPEG, PNG, WebP...): {exc}"
            ) from None
        except HTTPException:
            raise
        except Exception as exc:
            raise HTTPException(
                500, f"the dice reader failed on this photo ({type(exc).__name__}: {exc})"
            ) from None
        with self._cache_lock:
            self._cache[key] = result
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return result
