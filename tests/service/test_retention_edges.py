"""Retention at its edges: what a pruning pass counts, which days it reaches, and the scheduler's
passes when one of them fails or only a start clean-up is asked for."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from service.retention import prune_tracker_photos, schedule
from service.tracker import create_app as create_tracker_app

from .conftest import SettableClock
from .test_service_longevity import _submit, register
from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import jpeg
from dicecam_testing.waiting import wait_for


def test_a_pass_counts_only_the_photos_it_dropped_and_keeps_the_last_kept_day(tmp_path: Path):
    clock = SettableClock("2027-03-01T09:00:00+00:00")
    tracker = create_tracker_app(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    try:
        with LiveServer(tracker) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
            _submit(c, register(c, prefix=""), "turn-of-day-1", jpeg())
        db = tracker.state.db
        assert prune_tracker_photos(db, date(2027, 3, 31), 30) == 0  # 30 days on: kept
        assert prune_tracker_photos(db, date(2027, 4, 1), 30) == 1
        assert prune_tracker_photos(db, date(2027, 4, 1), 30) == 0  # none left to drop
        with pytest.raises(ValueError, match="got -1"):
            prune_tracker_photos(db, date(2027, 4, 1), -1)
    finally:
        tracker.state.db.dispose()


def test_a_failing_pass_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture):
    ran = {"after": 0}
    app = FastAPI()

    def failing() -> None:
        raise RuntimeError("disk gone")

    def after() -> None:
        ran["after"] += 1

    with caplog.at_level(logging.ERROR, logger="dicecam.service"):
        schedule(app, [failing, after], every_s=0.02)
        with LiveServer(app):
            wait_for(lambda: ran["after"] >= 3)
    assert "retention pass" in caplog.text and "disk gone" in caplog.text


def test_a_start_clean_up_alone_runs_once_at_the_start():
    ran = {"start": 0}
    app = FastAPI()

    def once() -> None:
        ran["start"] += 1

    schedule(app, [], every_s=0.02, at_start=[once])
    with LiveServer(app):
        wait_for(lambda: ran["start"] == 1)
