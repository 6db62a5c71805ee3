"""Worker threads of their own for the work that may call a tracker: a move that ends a turn
submits it, a login asks the tracker. The embedded tracker answers on the worker threads every
route shares (40); when each of those waited on it (40 turns banked at once), it could answer
none, and the turns were queued as "timed out" with the tracker up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

__all__ = ["TRACKER_CALLERS", "calling_a_tracker"]

TRACKER_CALLERS = 40
"""How many requests at once may run work that may call a tracker; the others wait, holding
no thread."""

T = TypeVar("T")


async def calling_a_tracker(request: Request, func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` on a worker thread of the app's own for work that may call a tracker
    (the service's threads, not those the embedded tracker's routes answer on)."""
    state = request.app.state
    limiter = getattr(state, "tracker_callers", None)
    if limiter is None:  # made in the app's event loop, at its first use
        limiter = state.tracker_callers = anyio.CapacityLimiter(TRACKER_CALLERS)
    return await anyio.to_thread.run_sync(func, *args, limiter=limiter)
