"""How long the service and the tracker keep what they store, so that years of daily turns
stay in bounds (the figures: ``tests/benchmarks/bench_longevity.py``).

- A turn in progress and its photos (``turns.sqlite3``, ``turn-photos/``; the photos on disk
  only): a day at most, swept at each pass (:meth:`service.session_store.SessionStore.sweep`),
  the photos until the finished turn is handed to the tracker.
- The outbox: a pending or refused turn is kept whole; a delivered one keeps its record (values,
  readings, the tracker's answer) without its photos, which the tracker holds
  (:func:`service.tracker_client.client.without_photos`; :func:`slim_delivered`, once at start,
  for entries an older dicecam delivered with them).
- The tracker: every turn, its rolls' values and readings for good; each roll's photo for
  ``DICECAM_KEEP_PHOTOS_DAYS`` days after the turn's day (0: for good)
  (:func:`prune_tracker_photos`).

:func:`schedule` runs such passes at start, then every hour, in a daemon thread.

Example (not run: needs an app and a tracker database):
    >>> schedule(app, [lambda: prune_tracker_photos(db, date.today(), 365)])  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

__all__ = ["prune_tracker_photos", "schedule", "slim_delivered"]

log = logging.getLogger("dicecam.service")

EVERY_S = 3600.0
"""How often the retention passes run in a long-running server (and once at its start)."""


def prune_tracker_photos(db: Any, today: date, keep_days: int) -> int:
    """Drop the photos of the tracker's rolls whose turn was played more than ``keep_days``
    days before ``today`` (``db``: a :class:`service.tracker.db.Database`); the turns, their
    rolls' values and readings stay. ``keep_days`` 0 keeps every photo. Returns how many
    photos were dropped."""
    if keep_days < 0:
        raise ValueError(f"expected keep_days of 0 (for good) or more, got {keep_days}")
    if keep_days == 0:
        return 0
    from sqlalchemy import select, update

    from service.tracker.models import Roll, Turn

    cutoff = today - timedelta(days=keep_days)
    old = select(Turn.id).where(Turn.day < cutoff)
    with db.writing() as session:
        result = session.execute(
            update(Roll)
            .where(Roll.turn_id.in_(old), Roll.photo.is_not(None))
            .values(photo=None)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    dropped = int(result.rowcount or 0)
    if dropped:
        log.info("tracker: dropped %d roll photos of turns before %s", dropped, cutoff)
    return dropped


def slim_delivered(outbox_dir: str | Path) -> int:
    """Rewrite the outbox's delivered entries that still hold their photos without them (an
    older dicecam kept them there after delivery). Returns how many were rewritten."""
    from service.tracker_client.client import without_photos
    from service.tracker_client.outbox import Outbox

    folder = Path(outbox_dir).expanduser()
    if not (folder / "delivered").is_dir():
        return 0
    outbox = Outbox(folder)
    slimmed = 0
    for entry in outbox.entries("delivered"):
        slim = without_photos(entry.turn)
        if slim != entry.turn:
            entry.turn = slim
            outbox.write(entry)
            slimmed += 1
    if slimmed:
        log.info(
            "outbox: dropped the photos of %d delivered turns (the tracker holds them)", slimmed
        )
    return slimmed


def schedule(
    app: Any,
    tasks: Iterable[Callable[[], object]],
    every_s: float = EVERY_S,
    *,
    at_start: Iterable[Callable[[], object]] = (),
) -> None:
    """Run ``tasks`` at ``app``'s start, then every ``every_s`` seconds until it stops, in a
    daemon thread, and ``at_start`` once before them (a clean-up of what an older dicecam
    left); a task that fails is logged and the others run."""
    from service.api.submit import Every

    tasks, pending = list(tasks), list(at_start)
    if not tasks and not pending:
        return

    def run_all() -> None:
        for task in [*pending, *tasks]:
            try:
                task()
            except Exception:
                log.exception("retention pass %r failed; the next pass tries again", task)
        pending.clear()  # once only, even when it failed: it is logged

    loop = Every(every_s, run_all, name="dicecam-retention", first=True)
    app.router.add_event_handler("startup", loop.start)
    app.router.add_event_handler("shutdown", loop.stop)
