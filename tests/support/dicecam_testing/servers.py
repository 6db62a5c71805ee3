"""Servers on ports that stay the test's: a port is bound by the test process from the moment
it is chosen until the server listens on it, so a test process beside it (``pytest -n 2``)
cannot take it in between, as it could a port found free, released, then used.

Example (not run: starts a server):
    >>> with LiveServer(app) as server:  # doctest: +SKIP
    ...     httpx.get(server.url + "/api/v1/health", timeout=30)
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from typing import Any

__all__ = ["LiveServer", "bound_socket", "wait_listening"]


def bound_socket(port: int = 0, host: str = "127.0.0.1") -> socket.socket:
    """A TCP socket bound to ``host:port`` (0: a free port), not listening yet: the port is
    this process's from now on, so a test process beside it (``pytest -n 2``) cannot pick it
    between its choice and its use. ``SO_REUSEADDR`` lets a server listen on it later, in this
    process or another (``dicecam serve --port N``, PostgreSQL), while it is held."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def wait_listening(
    proc: subprocess.Popen, port: int, host: str = "127.0.0.1", timeout: float = 60.0
) -> bool:
    """Wait until something accepts TCP connections on ``host:port`` (a server ``proc``
    started there on a port :func:`bound_socket` holds, which may then be closed); False if
    ``proc`` ended first or ``timeout`` seconds passed (the caller's own wait says why)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class LiveServer:
    """A real uvicorn server for ``app`` in a background thread on ``host``, on a free port
    (or ``port``), bound as it is made; ``config``: more of uvicorn's settings (``ssl_*``)."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        root_path: str = "",
        port: int | None = None,
        **config: Any,
    ) -> None:
        import uvicorn

        self.host = host
        self.socket = bound_socket(port or 0, host)
        self.port: int = self.socket.getsockname()[1]
        settings = {"log_level": "warning", "timeout_graceful_shutdown": 1, **config}
        try:
            cfg = uvicorn.Config(app, host=host, port=self.port, **settings)
        except BaseException:
            self.socket.close()
            raise
        scheme = "https" if cfg.ssl_certfile else "http"
        self.url = f"{scheme}://{host}:{self.port}{root_path}"
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def start(self, timeout: float = 20.0) -> LiveServer:
        """Start serving; returns once uvicorn has started."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"uvicorn did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop serving and give the port up."""
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(10)
        self.socket.close()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
