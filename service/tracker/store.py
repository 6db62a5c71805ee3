"""What the tracker does with its database, independent of HTTP: turns, corrections, standings.

Every function takes a SQLAlchemy session and the server's clock reading (``now``, aware UTC);
rule violations raise :class:`TrackerError` subclasses that carry an HTTP status. Players and
tokens live in :mod:`service.tracker.accounts`, re-exported here.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy import case, func, literal, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload, subqueryload
from sqlalchemy.orm.attributes import set_committed_value

from service.tracker import rules
from service.tracker.accounts import (
    RELOGIN,
    TOKEN_DAYS,
    Clock,
    Conflict,
    Forbidden,
    NotFound,
    TrackerError,
    Unauthorized,
    authenticate,
    change_password,
    change_timezone,
    check_name_free,
    check_password,
    ensure_admin,
    get_player,
    issue_token,
    login,
    name_key,
    pending_zone,
    register,
    reset_password,
    revoke_token,
    revoke_tokens,
    token_expiry,
    utc,
    zone_at,
)
from service.tracker.bodies import shown
from service.tracker.models import Correction, Player, Roll, Turn
from service.tracker.schemas import CorrectionIn, TurnIn

__all__ = [
    "RELOGIN",
    "TOKEN_DAYS",
    "Clock",
    "Conflict",
    "Forbidden",
    "NotFound",
    "TrackerError",
    "Unauthorized",
    "authenticate",
    "change_password",
    "change_timezone",
    "check_name_free",
    "check_password",
    "correct_score",
    "count_turns",
    "ensure_admin",
    "get_player",
    "get_turn",
    "issue_token",
    "latest_turns",
    "leaderboard",
    "login",
    "pending_zone",
    "player_turns",
    "register",
    "reset_password",
    "revoke_token",
    "revoke_tokens",
    "roll_call",
    "rounds",
    "submit_turn",
    "token_expiry",
    "utc",
    "zone_at",
]


def _load_turn(session: Session, **where) -> Turn | None:
    stmt = select(Turn).options(
        selectinload(Turn.player),
        selectinload(Turn.rolls),
        selectinload(Turn.corrections).selectinload(Correction.admin),
    )
    for col, value in where.items():
        stmt = stmt.where(getattr(Turn, col) == value)
    return session.scalar(stmt)


def get_turn(session: Session, turn_id: int) -> Turn:
    turn = _load_turn(session, id=turn_id)
    if turn is None:
        raise NotFound(f"no turn with id {turn_id}")
    return turn


def submit_turn(
    session: Session, player: Player, turn_in: TurnIn, now: datetime
) -> tuple[Turn, bool]:
    """Store ``turn_in`` for ``player``; returns ``(turn, replayed)``.

    A resubmission with an idempotency key already stored returns the stored turn
    (``replayed=True``) whatever the time: the outbox may deliver late. Otherwise the server's
    clock decides: the player's local day, 8am-8pm local, one turn per player per day; a turn
    whose ``age_s`` puts its play on an earlier local day is refused (reported day-of only).
    """
    if name_key(turn_in.player) != player.name_key:
        raise Forbidden(
            f"a player can only submit their own turns: this token belongs to {player.name!r}, "
            f"the turn is for {shown(turn_in.player)}"
        )
    stored = _replay(session, player, turn_in.idempotency_key)
    if stored is not None:
        return stored, True
    if turn_in.age_s is not None:
        _check_day_of(player, now, turn_in.age_s)
    try:
        local = rules.check_open(now, zone_at(player, now))
    except rules.OutsideOpenHours as exc:
        raise Forbidden(str(exc)) from None
    day = local.date()
    taken = session.scalar(
        select(Turn.idempotency_key).where(Turn.player_id == player.id, Turn.day == day)
    )
    if taken is not None:
        if taken == turn_in.idempotency_key:  # stored by a concurrent request meanwhile
            return _replay(session, player, taken), True
        raise Conflict(_second_turn(player, day))
    turn = Turn(
        player_id=player.id,
        day=day,
        round=rules.round_of(day),
        score=turn_in.score,
        comment=turn_in.comment,
        game=turn_in.game,
        idempotency_key=turn_in.idempotency_key,
        submitted_at=now,
        local_time=local.replace(microsecond=0).isoformat(),
        rolls=[
            Roll(position=i, values=r.values, reading=r.reading, photo=r.photo_bytes())
            for i, r in enumerate(turn_in.rolls)
        ],
    )
    session.add(turn)
    try:
        session.flush()
    except IntegrityError:
        # A concurrent request stored the same key, or another turn for this day.
        session.rollback()
        stored = _replay(session, player, turn_in.idempotency_key)
        if stored is not None:
            return stored, True
        raise Conflict(_second_turn(player, day)) from None
    turn.player = player
    set_committed_value(turn, "corrections", [])
    for roll in turn.rolls:  # a column of the database's, not loaded back by the flush
        set_committed_value(roll, "has_photo", roll.photo is not None)
    return turn, False


def _check_day_of(player: Player, now: datetime, age_s: float) -> None:
    """:class:`Forbidden` when a turn played ``age_s`` seconds ago was played on another local
    day than today's: scores are reported day-of, a turn delivered late never takes the slot of
    the day it arrives on."""
    zone, then = zone_at(player, now), now - timedelta(seconds=age_s)
    today = rules.local_day(now, zone)
    played = rules.local_day(then, zone_at(player, then))
    if played != today:
        raise Forbidden(
            f"scores must be reported day-of: this turn was played on {played.isoformat()} and "
            f"it is {today.isoformat()} now in {zone}, so it is not entered "
            "(a missed day is a missed turn)"
        )


def _second_turn(player: Player, day: date) -> str:
    return f"{player.name} already took a turn on {day.isoformat()} (one turn per player per day)"


def _replay(session: Session, player: Player, key: str) -> Turn | None:
    stored = _load_turn(session, idempotency_key=key)
    if stored is not None and stored.player_id != player.id:
        raise Conflict(f"idempotency key {key!r} was already used for another player's turn")
    return stored


def correct_score(
    session: Session, admin: Player, turn_id: int, correction: CorrectionIn, now: datetime
) -> Turn:
    if not admin.is_admin:
        raise Forbidden(f"only an administrator can correct a score; {admin.name!r} is not one")
    turn = get_turn(session, turn_id)
    if turn.player_id == admin.id and correction.score > turn.score:
        raise Forbidden(
            f"an administrator cannot raise their own score: turn {turn_id} is {admin.name}'s "
            f"({turn.score} points), expected at most {turn.score}, got {correction.score} "
            "(another administrator can raise it)"
        )
    session.add(
        Correction(
            turn_id=turn.id,
            admin_id=admin.id,
            old_score=turn.score,
            new_score=correction.score,
            reason=correction.reason,
            created_at=now,
        )
    )
    turn.score = correction.score
    session.flush()
    session.expire(turn)
    return get_turn(session, turn_id)


def rounds(session: Session, current: int) -> list[int]:
    """Every round with a turn, and the ``current`` one, newest first."""
    years = set(session.scalars(select(Turn.round).distinct()))
    years.add(current)
    return sorted(years, reverse=True)


def leaderboard(session: Session, round_: int) -> list[dict]:
    """The standings of ``round_``: best total first; a tie shares a rank and goes by best
    turn, then name. One query, answered from ``ix_turns_round_player`` alone."""
    per_player = (
        select(
            Turn.player_id,
            func.sum(Turn.score).label("total"),
            func.count().label("turns"),
            func.max(Turn.score).label("best"),
            func.max(Turn.day).label("last"),
        )
        .where(Turn.round == round_)
        .group_by(Turn.player_id)
        .subquery()
    )
    c = per_player.c
    stmt = select(Player.name, c.total, c.turns, c.best, c.last).join(
        per_player, c.player_id == Player.id
    )
    rows = sorted(session.execute(stmt), key=lambda r: (-int(r[1]), -int(r[3]), r[0].lower()))
    out, rank, prev = [], 0, None
    for i, (name, total, turns, best, last) in enumerate(rows, start=1):
        if int(total) != prev:
            rank, prev = i, int(total)
        out.append(
            {
                "rank": rank,
                "player": name,
                "total": int(total),
                "turns": int(turns),
                "best": int(best),
                "last_day": last,
            }
        )
    return out


def latest_turns(session: Session, round_: int) -> dict[str, Turn]:
    """Each player's latest turn of ``round_`` by name, its rolls loaded (not their photos):
    two queries however many players and turns."""
    last = (
        select(Turn.player_id, func.max(Turn.day).label("day"))
        .where(Turn.round == round_)
        .group_by(Turn.player_id)
        .subquery()
    )
    stmt = (
        select(Turn, Player.name)
        .join(last, (Turn.player_id == last.c.player_id) & (Turn.day == last.c.day))
        .join(Player, Turn.player_id == Player.id)
        .options(selectinload(Turn.rolls))
    )
    return {name: turn for turn, name in session.execute(stmt)}


def player_turns(
    session: Session,
    name: str,
    round_: int | None = None,
    *,
    before: date | None = None,
    after: date | None = None,
    limit: int | None = None,
) -> tuple[Player, list[Turn]]:
    """``name``'s turns, newest first, with their rolls (not their photos) and corrections:
    five queries however many turns (``selectinload`` would send one per 500 turns).

    ``before`` keeps the days before it and ``limit`` the newest of those: a page of the
    history, whose next page is ``before=`` its last day (a player has one turn a day).
    ``after`` keeps the days after it and ``limit`` the oldest of those (still listed newest
    first): the page before, ``after=`` a page's first day.
    """
    player = get_player(session, name)
    stmt = (
        select(Turn)
        .options(
            subqueryload(Turn.rolls),
            subqueryload(Turn.corrections).selectinload(Correction.admin),
        )
        .where(Turn.player_id == player.id)
        .order_by(Turn.day.asc() if after is not None else Turn.day.desc())
    )
    if round_ is not None:
        stmt = stmt.where(Turn.round == round_)
    if before is not None:
        stmt = stmt.where(Turn.day < before)
    if after is not None:
        stmt = stmt.where(Turn.day > after)
    if limit is not None:
        stmt = stmt.limit(limit)
    turns = list(session.scalars(stmt))
    if after is not None:
        turns.reverse()
    for turn in turns:
        set_committed_value(turn, "player", player)
    return player, turns


def count_turns(
    session: Session, player: Player, round_: int | None = None, *, after: date | None = None
) -> tuple[int, int]:
    """``(all, newer)``: how many turns ``player`` has (in ``round_``), and how many of them are
    for days after ``after`` (0 without it). One query, from ``uq_turns_player_day``."""
    newer = func.sum(case((Turn.day > after, 1), else_=0)) if after is not None else literal(0)
    stmt = select(func.count(), func.coalesce(newer, 0)).where(Turn.player_id == player.id)
    if round_ is not None:
        stmt = stmt.where(Turn.round == round_)
    total, later = session.execute(stmt).one()
    return int(total), int(later)


def roll_call(session: Session, now: datetime) -> list[dict]:
    """Every registered player: the local day they joined on, their turns, whether they rolled
    today (their own local day)."""
    players = list(session.scalars(select(Player).order_by(Player.created_at, Player.id)))
    stmt = select(Turn.player_id, func.count(), func.max(Turn.day)).group_by(Turn.player_id)
    counts, last = {}, {}
    for player_id, turns, day in session.execute(stmt):
        counts[player_id], last[player_id] = turns, day
    out = []
    for p in players:
        today = rules.local_day(now, zone_at(p, now))
        out.append(
            {
                "player": p.name,
                "timezone": zone_at(p, now),
                "joined": rules.local_day(utc(p.created_at), p.timezone),
                "turns": int(counts.get(p.id, 0)),
                "last_day": last.get(p.id),
                "rolled_today": last.get(p.id) == today,
            }
        )
    return out
