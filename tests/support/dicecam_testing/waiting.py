"""Waiting in a test for something a background thread or server does."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["wait_for"]


def wait_for(check: Callable[[], object], timeout: float = 10.0, poll: float = 0.02) -> None:
    """Wait until ``check()`` is true (a background pass, a worker's write), else fail naming
    it (its docstring, or the callable)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {check.__doc__ or check}")
        time.sleep(poll)
