"""How many photos the service reads at once, and how many may wait: the rest get 503.

Each read decodes a photo (a 12-megapixel JPEG is tens of megabytes decoded) and runs the
models on it. Reads run in worker threads of their own (``DICECAM_READ_WORKERS`` at once), so a
photo waiting for a worker holds no thread of the server's pool (which moves turns, keeps and
banks meanwhile). A photo is admitted before its body is read: past ``DICECAM_READ_WORKERS +
DICECAM_READ_QUEUE`` photos in flight the request is answered 503 with ``Retry-After`` at once,
before it uploads anything, so memory stays bounded however many phones send at once. An
admitted upload that sends nothing for ``DICECAM_UPLOAD_IDLE_S`` is answered 408, so clients that
stall or vanish mid-upload do not keep the places of those who send.

Example:
    >>> import asyncio
    >>> queue = ReadQueue(workers=2, waiting=8)
    >>> async def read(photo):
    ...     async with queue.ticket():  # 503 with Retry-After when 8 wait already
    ...         return await queue.run(len, photo)  # reader.read in the service
    >>> asyncio.run(read(b"photo bytes"))
    11
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import HTTPException
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from starlette.types import Message, Receive

__all__ = ["ReadQueue", "ReadQueueSettings"]

T = TypeVar("T")


class ReadQueueSettings(BaseSettings):
    """``DICECAM_READ_WORKERS`` and ``DICECAM_READ_QUEUE``."""

    model_config = SettingsConfigDict(env_prefix="DICECAM_", extra="ignore")

    read_workers: int = Field(4, ge=1, le=64)
    """Photos read at once (each on a thread of its own; more only share the CPU)."""
    read_queue: int = Field(16, ge=0, le=10_000)
    """Photos that may wait for a worker; past them a photo is answered 503 + Retry-After."""
    upload_idle_s: float = Field(30.0, gt=0, le=3600, allow_inf_nan=False)
    """A photo upload that sends nothing for this long is answered 408 and gives its place up."""


class ReadQueue:
    """At most ``workers`` reads at once and ``waiting`` more admitted; the rest are refused.

    Args:
        workers: reads running at once, each in a thread of this queue's own limiter.
        waiting: reads admitted beyond those, waiting (without a thread) for a worker.
        idle_s: seconds an admitted upload may send nothing (see :meth:`idle_limited`).
    """

    def __init__(self, workers: int = 4, waiting: int = 16, idle_s: float = 30.0) -> None:
        if workers < 1 or waiting < 0:
            raise ValueError(f"expected workers >= 1 and waiting >= 0, got {workers}, {waiting}")
        self.workers = workers
        self.waiting = waiting
        self.idle_s = idle_s
        """How long an admitted upload may send nothing before it is answered 408."""
        self.in_flight = 0
        """Photos admitted and not yet answered (uploading, waiting or being read)."""
        self._limiter = anyio.CapacityLimiter(workers)
        self._read_s = 1.0
        """A moving average of how long a read takes, for ``Retry-After``."""

    @classmethod
    def from_settings(cls, settings: ReadQueueSettings | None = None) -> ReadQueue:
        settings = settings or ReadQueueSettings()
        return cls(settings.read_workers, settings.read_queue, settings.upload_idle_s)

    def retry_after(self) -> int:
        """Seconds until a place is likely free for a photo refused now (at least 1): the queue
        is full, and a place frees when the first photo in it is answered, within about a read
        (the reads' moving average) with every worker busy. The refused photo's own read, and
        the photos waiting, are not counted: sent again then, it is admitted and waits in the
        queue for a worker."""
        return max(1, math.ceil(self._read_s))

    @asynccontextmanager
    async def ticket(self) -> AsyncIterator[None]:
        """Admit one photo for as long as the block runs, or raise 503 with ``Retry-After``
        when ``workers + waiting`` photos are in flight already."""
        limit = self.workers + self.waiting
        if self.in_flight >= limit:
            wait = self.retry_after()
            busy = "1 photo is" if self.in_flight == 1 else f"{self.in_flight} photos are"
            raise HTTPException(
                503,
                f"the reader is busy: {busy} being read or waiting "
                f"(at most {self.workers} read at once and {self.waiting} wait: "
                f"DICECAM_READ_WORKERS, DICECAM_READ_QUEUE); send the photo again in {wait} s",
                headers={"Retry-After": str(wait)},
            )
        self.in_flight += 1  # the event loop is one thread: no lock needed
        try:
            yield
        finally:
            self.in_flight -= 1

    def idle_limited(self, receive: Receive) -> Receive:
        """``receive`` that answers 408 when the client sends nothing for ``idle_s``: a client
        that stalls mid-upload (or never sends the body) gives its place up."""

        async def limited() -> Message:
            with anyio.move_on_after(self.idle_s):
                return await receive()
            raise HTTPException(
                408,
                f"the upload stalled: nothing came for {self.idle_s:g} s "
                "(DICECAM_UPLOAD_IDLE_S); send the photo again",
            )

        return limited

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` on one of the queue's ``workers`` threads, once one is free: a
        photo waits on the event loop, holding no thread of the server's pool."""

        def timed() -> T:
            start = time.monotonic()
            try:
                return func(*args)
            finally:
                self._read_s = 0.8 * self._read_s + 0.2 * (time.monotonic() - start)

        return await anyio.to_thread.run_sync(timed, limiter=self._limiter)
