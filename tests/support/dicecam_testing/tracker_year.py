"""A tracker database seeded in bulk with rounds of daily turns (``seed_rounds``), what was
seeded in Python (``Seeded``: the figures the tracker must agree with), and a counter of the SQL
statements an engine runs (``StatementCounter``). Used by tests/service/test_tracker_scale.py
and by scripts that measure the tracker with a full year of data."""

from __future__ import annotations

import random
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Engine, event, insert

from service.tracker.db import Database
from service.tracker.models import Correction, Player, Roll, Token, Turn
from service.tracker.security import hash_token

__all__ = ["Seeded", "StatementCounter", "seed_rounds"]


@dataclass
class Seeded:
    """What was seeded, in Python: the figures the tracker must agree with."""

    players: list[str]
    scores: dict[int, dict[str, list[tuple[date, int]]]] = field(default_factory=dict)
    """round -> player -> (day, score after corrections), in seeding order."""
    tokens: dict[str, str] = field(default_factory=dict)
    """player -> a bearer token."""
    camera_turn: int = 0
    """The id of a turn with rolls, photos and a correction."""
    camera: set[tuple[str, date]] = field(default_factory=set)
    """The turns (player, day) with two camera rolls."""
    corrected: dict[tuple[str, date], tuple[int, int]] = field(default_factory=dict)
    """The corrected turns: (player, day) -> (score sent, score now)."""

    def standings(self, round_: int) -> list[tuple[int, str, int, int, int, str]]:
        """``(rank, player, total, turns, best, last day)``, best total first: ties share a
        rank and go by best turn, then name."""
        rows = sorted(
            (
                (-sum(s for _, s in turns), -max(s for _, s in turns), name.lower(), name, turns)
                for name, turns in self.scores.get(round_, {}).items()
            ),
        )
        out, rank, prev = [], 0, None
        for i, (neg_total, neg_best, _, name, turns) in enumerate(rows, start=1):
            if -neg_total != prev:
                rank, prev = i, -neg_total
            last = max(d for d, _ in turns).isoformat()
            out.append((rank, name, -neg_total, len(turns), -neg_best, last))
        return out


def seed_rounds(
    db: Database,
    now: datetime,
    *,
    players: int,
    rounds: dict[int, int],
    password_hash: str,
    photo_bytes: int = 200,
    seed: int = 1,
) -> Seeded:
    """Bulk-insert into ``db`` ``players`` players and, for each ``round: days``, a turn per player per day
    from January 1st (a few days skipped), every fifth turn with two camera rolls (a reading and
    a ``photo_bytes`` photo each), two in thirty corrected by the administrator ``p000``."""
    rng = random.Random(seed)
    names = [f"p{i:03d}" for i in range(players)]
    seeded = Seeded(names)
    zones = ["UTC", "Europe/Paris", "America/Chicago", "Asia/Tokyo", "Pacific/Kiritimati"]
    photo = b"\xff\xd8" + bytes(rng.randrange(256) for _ in range(max(photo_bytes - 2, 0)))
    with db.writing() as session:
        ids = session.scalars(
            insert(Player).returning(Player.id, sort_by_parameter_order=True),
            [
                {
                    "name": n,
                    "name_key": n,
                    "password_hash": password_hash,
                    "timezone": zones[i % len(zones)],
                    "is_admin": i == 0,
                    "created_at": datetime(min(rounds), 1, 1, tzinfo=UTC),
                }
                for i, n in enumerate(names)
            ],
        ).all()
        player_id = dict(zip(names, ids, strict=True))
        for n in names:
            token = uuid.uuid4().hex
            seeded.tokens[n] = token
            session.execute(
                insert(Token),
                [
                    {
                        "token_hash": hash_token(token),
                        "player_id": player_id[n],
                        "created_at": now,
                        "expires_at": now + timedelta(days=365),
                    }
                ],
            )
        turns, plan, taken = [], [], {}
        for year, days in sorted(rounds.items()):
            for offset in range(days):
                day = date(year, 1, 1) + timedelta(days=offset)
                for n in names:
                    if rng.random() < 0.05:  # a missed day
                        continue
                    sent = rng.randrange(0, 61) * 50
                    k = taken[n] = taken.get(n, -1) + 1  # the player's k-th turn
                    camera, corrected = k % 5 == 1, k % 15 in (1, 8)
                    score = sent // 2 // 50 * 50 if corrected else sent
                    turns.append(
                        {
                            "player_id": player_id[n],
                            "day": day,
                            "round": year,
                            "score": score,
                            "comment": "a fine morning" if camera else "",
                            "game": "morning-roll",
                            "idempotency_key": uuid.uuid4().hex,
                            "submitted_at": datetime(day.year, day.month, day.day, 9, tzinfo=UTC),
                            "local_time": f"{day.isoformat()}T09:00:00+00:00",
                        }
                    )
                    plan.append((n, day, year, sent, score, camera, corrected))
        turn_ids = session.scalars(
            insert(Turn).returning(Turn.id, sort_by_parameter_order=True), turns
        ).all()
        rolls, corrections = [], []
        for turn_id, (n, day, year, sent, score, camera, corrected) in zip(
            turn_ids, plan, strict=True
        ):
            if camera:
                seeded.camera.add((n, day))
                for position in range(2):
                    rolls.append(
                        {
                            "turn_id": turn_id,
                            "position": position,
                            "values": [1, 5, 2, 3, 6, 4][position:],
                            "reading": {"dice": position + 5, "latency_ms": 41.5},
                            "photo": photo,
                        }
                    )
            if corrected:
                seeded.corrected[n, day] = (sent, score)
                corrections.append(
                    {
                        "turn_id": turn_id,
                        "admin_id": player_id[names[0]],
                        "old_score": sent,
                        "new_score": score,
                        "reason": "miscounted",
                        "created_at": now,
                    }
                )
                if camera and not seeded.camera_turn:
                    seeded.camera_turn = turn_id
            seeded.scores.setdefault(year, defaultdict(list))[n].append((day, score))
        if rolls:
            session.execute(insert(Roll), rolls)
        if corrections:
            session.execute(insert(Correction), corrections)
        session.commit()
    return seeded


class StatementCounter:
    """Counts the SQL statements the tracker's engines run (``before_cursor_execute``)."""

    def __init__(self, *engines: Engine) -> None:
        self.engines = engines
        self.statements: list[tuple[str, object]] = []
        for engine in engines:
            event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self.statements.append((statement, parameters))

    @contextmanager
    def counting(self) -> Iterator[list[tuple[str, object]]]:
        """The statements run inside the block, with their parameters."""
        start = len(self.statements)
        seen: list[tuple[str, object]] = []
        yield seen
        seen.extend(self.statements[start:])
