"""The read queue's ``Retry-After``: the seconds until a place in the queue is likely free for
the photo refused, about one read (from how long reads took lately), not counting the photos
waiting nor the refused photo's own read: sent again then, it is admitted and waits its turn."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack

import pytest
from fastapi import HTTPException

from service.api.read_queue import ReadQueue


async def refused(queue: ReadQueue) -> HTTPException:
    with pytest.raises(HTTPException) as e:
        async with queue.ticket():
            pass
    return e.value


def test_a_refused_photo_sent_again_after_retry_after_is_admitted():
    """Two workers and two places to wait, all taken by reads of 0.3 s: the fifth photo is told
    to come back in a read's time (the first guess, 1 s), not after the four before it and its
    own read (3 s); by then a place is free and it is admitted."""
    queue = ReadQueue(workers=2, waiting=2)

    async def read() -> None:
        async with queue.ticket():
            await queue.run(time.sleep, 0.3)

    async def scenario() -> tuple[HTTPException, float, float]:
        reads = [asyncio.create_task(read()) for _ in range(4)]
        await asyncio.sleep(0)  # each admitted
        assert queue.in_flight == 4
        error = await refused(queue)
        start = time.monotonic()
        while queue.in_flight == 4:
            await asyncio.sleep(0.01)
        freed = time.monotonic() - start
        await asyncio.sleep(max(0.0, int(error.headers["Retry-After"]) - freed))
        async with queue.ticket():  # sent again after Retry-After: admitted
            admitted = time.monotonic() - start
        await asyncio.gather(*reads)
        return error, freed, admitted

    error, freed, admitted = asyncio.run(scenario())
    assert error.status_code == 503 and error.headers == {"Retry-After": "1"}
    assert "4 photos are being read or waiting" in error.detail
    assert error.detail.endswith("send the photo again in 1 s")
    assert freed < 1 <= admitted < 2  # a place was free before the time said
    assert queue.in_flight == 0  # every place given back


@pytest.mark.parametrize("waiting", [0, 7])
def test_retry_after_follows_the_reads_timed_not_the_photos_waiting(waiting):
    """One worker, one read of 2.5 s: the guess of a read moves a fifth of the way from 1 s
    (1.3 s), and a refused photo is told 2 s (one read, rounded up), however many photos wait
    (each is answered before it, but a place frees with the first)."""
    queue = ReadQueue(workers=1, waiting=waiting)

    async def scenario() -> tuple[int, HTTPException]:
        await queue.run(time.sleep, 2.5)
        alone = queue.retry_after()
        async with AsyncExitStack() as held:
            for _ in range(1 + waiting):
                await held.enter_async_context(queue.ticket())
            return alone, await refused(queue)

    alone, error = asyncio.run(scenario())
    assert alone == 2
    assert error.status_code == 503 and error.headers == {"Retry-After": "2"}
    busy = "1 photo is" if waiting == 0 else f"{1 + waiting} photos are"
    assert f"the reader is busy: {busy} being read or waiting" in error.detail
    assert "send the photo again in 2 s" in error.detail
    assert queue.in_flight == 0
