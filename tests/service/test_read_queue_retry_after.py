"""The read queue's ``Retry-After``: the seconds until a worker is likely free for one more
photo, from how long reads took lately and how many photos wait before it."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack

import pytest
from fastapi import HTTPException

from service.api.read_queue import ReadQueue


def test_retry_after_follows_the_reads_timed_and_the_photos_waiting():
    """One worker, reads of about 0.1 s: eight photos before a new one are about eight reads
    away, not one (a single round) nor eight seconds (a read's first guess, never learned)."""
    queue = ReadQueue(workers=1, waiting=7)

    async def scenario() -> tuple[int, int, HTTPException]:
        for _ in range(10):
            await queue.run(time.sleep, 0.1)
        alone = queue.retry_after()
        async with AsyncExitStack() as held:
            for _ in range(8):
                await held.enter_async_context(queue.ticket())
            behind_eight = queue.retry_after()
            with pytest.raises(HTTPException) as refused:
                async with queue.ticket():
                    pass
        return alone, behind_eight, refused.value

    alone, behind_eight, refused = asyncio.run(scenario())
    assert alone == 1
    assert 2 <= behind_eight <= 5  # 9 reads of 0.1-0.5 s
    assert refused.status_code == 503 and refused.headers == {"Retry-After": str(behind_eight)}
    assert f"send the photo again in {behind_eight} s" in refused.detail
    assert queue.in_flight == 0  # every place given back
