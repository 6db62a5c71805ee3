"""``service.api.submit.Every``: the service's periodic tasks (the retries of queued turns, the
retention sweep) in a daemon thread, at start too when asked, carrying on past an error."""

from __future__ import annotations

import logging
import threading

from service.api.submit import Every


def test_first_calls_the_task_at_start_and_without_it_only_after_a_wait() -> None:
    called = threading.Event()
    loop = Every(60, called.set, first=True)
    loop.start()
    try:
        assert called.wait(10)  # at start, not 60 s later
    finally:
        loop.stop()
    later = threading.Event()
    loop = Every(60, later.set)
    loop.start()
    try:
        assert not later.wait(0.5)
    finally:
        loop.stop()


def test_an_error_is_logged_and_the_next_call_comes(caplog) -> None:
    calls: list[int] = []
    twice = threading.Event()

    def task() -> None:
        calls.append(1)
        if len(calls) == 2:
            twice.set()
        raise OSError("disk full")

    loop = Every(0.01, task, name="retention-test")
    with caplog.at_level(logging.ERROR, logger="dicecam.service"):
        loop.start()
        try:
            assert twice.wait(10)
        finally:
            loop.stop()
    assert "retention-test: the periodic task failed" in caplog.text
    assert "disk full" in caplog.text
