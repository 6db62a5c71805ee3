"""Run an ASGI app with uvicorn in a background thread on a free port (tests, benchmarks).

Example (not run: starts a server):
    >>> with BackgroundServer(create_app()) as server:  # doctest: +SKIP
    ...     httpx.get(server.url + "/api/v1/health")
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

__all__ = ["BackgroundServer", "free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class BackgroundServer:
    """uvicorn serving ``app`` on ``host:port`` (a free port by default) until ``stop()``."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int | None = None, **config: Any):
        import uvicorn

        self.host = host
        self.port = port or free_port(host)
        cfg = uvicorn.Config(app, host=host, port=self.port, log_level="warning", **config)
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, name="dicecam-uvicorn", daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self.server.config.ssl_certfile else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
