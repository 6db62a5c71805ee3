"""Players and their bearer tokens: registering, logging in and out, who a token is.

Also what every part of the store shares: the errors (each carries an HTTP status), ``utc`` and
the ``Clock`` type. Every function takes a SQLAlchemy session and, where time matters, the
server's clock reading (``now``, aware UTC). :mod:`service.tracker.store` re-exports it all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from service.tracker import rules
from service.tracker.bodies import shown
from service.tracker.models import Player, Token
from service.tracker.schemas import Registration
from service.tracker.security import hash_password, hash_token, new_token, verify_password

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
    "ensure_admin",
    "get_player",
    "issue_token",
    "login",
    "name_key",
    "pending_zone",
    "register",
    "reset_password",
    "revoke_token",
    "revoke_tokens",
    "token_expiry",
    "utc",
    "zone_at",
]

Clock = Callable[[], datetime]


class TrackerError(Exception):
    status = 400


class Unauthorized(TrackerError):
    status = 401


class Forbidden(TrackerError):
    status = 403


class NotFound(TrackerError):
    status = 404


class Conflict(TrackerError):
    status = 409


def utc(dt: datetime) -> datetime:
    """SQLite hands back naive datetimes: they are UTC."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def name_key(name: str) -> str:
    """The lower-cased name: names are unique regardless of case (``Player.name_key``)."""
    return name.strip().lower()


_LOOKALIKES = (("rn", "m"), ("vv", "w"), ("I", "l"), ("1", "l"), ("0", "O"))
"""Letters that read alike in the pages' sans-serif font (``Ian`` and ``lan``)."""


def _skeleton(name: str) -> str:
    """How ``name`` looks on a page: look-alike letters made one, runs of spaces one space (a
    page shows ``Bob  Smith`` as ``Bob Smith``). Case is kept: ``Lan`` does not look like
    ``Ian`` (names are unique regardless of case anyway)."""
    for seen, like in _LOOKALIKES:
        name = name.replace(seen, like)
    return " ".join(name.split())


def _lookalike(session: Session, name: str) -> str | None:
    """The registered name that reads like ``name`` on a page, if any."""
    skeleton = _skeleton(name)
    return next((n for n in session.scalars(select(Player.name)) if _skeleton(n) == skeleton), None)


def get_player(session: Session, name: str) -> Player:
    if "\x00" in name:  # no player has one; PostgreSQL would refuse the query (a 500)
        raise NotFound(f"no player named {shown(name)}")
    player = session.scalar(select(Player).where(Player.name_key == name_key(name)))
    if player is None:
        raise NotFound(f"no player named {shown(name)}")
    return player


def check_name_free(session: Session, name: str) -> None:
    """:class:`Conflict` when ``name`` is taken (case-insensitively) or reads like a registered
    name. The registration routes ask before hashing the password: a refused name costs no
    argon2 hash (it gives back its place in the limit per address, so it was a free one)."""
    if session.scalar(select(Player.id).where(Player.name_key == name_key(name))) is not None:
        raise Conflict(f"the name {name!r} is already taken")
    if (other := _lookalike(session, name)) is not None:  # an impostor of another player
        raise Conflict(
            f"the name {name!r} reads like {other!r}, a player already registered: "
            "expected a name that looks different"
        )


def register(
    session: Session,
    reg: Registration,
    now: datetime,
    *,
    is_admin: bool = False,
    password_hash: str | None = None,
) -> Player:
    """Create an account; :class:`Conflict` when the name is taken (case-insensitively)."""
    check_name_free(session, reg.name)
    player = Player(
        name=reg.name,
        name_key=name_key(reg.name),
        password_hash=password_hash or hash_password(reg.password),
        timezone=reg.timezone,
        is_admin=is_admin,
        created_at=now,
    )
    session.add(player)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"the name {reg.name!r} is already taken") from None
    return player


def zone_at(player: Player, now: datetime) -> str:
    """The zone whose days ``player``'s turns count for at ``now``: a change asked for takes
    over at its ``timezone_from``."""
    if player.next_timezone is not None and utc(now) >= utc(player.timezone_from):
        return player.next_timezone
    return player.timezone


def pending_zone(player: Player, now: datetime) -> tuple[str, datetime] | None:
    """The zone change ``player`` asked for that has not taken over at ``now``: the zone and
    when it does (aware UTC); None without one."""
    if player.next_timezone is None or zone_at(player, now) == player.next_timezone:
        return None
    return player.next_timezone, utc(player.timezone_from)


def change_timezone(session: Session, player: Player, timezone: str, now: datetime) -> Player:
    """``player`` plays in ``timezone`` from :func:`rules.zone_change_at` on (the first midnight
    there once their day under way is over): turns until then count in the zone in force, turns
    taken keep their day. Before it takes over, a change asked for is kept when asked again,
    replaced by another zone, or called off by the zone in force; :class:`Conflict` when
    ``timezone`` is in force with nothing to call off.

    Raises:
        rules.InvalidTimezone: ``timezone`` is not an IANA zone.
    """
    rules.zone_to_pick(timezone)
    current = zone_at(player, now)
    pending = player.next_timezone if current == player.timezone else None
    if timezone == current and pending is None:
        raise Conflict(
            f"expected another time zone than {current!r}: {player.name}'s turns already "
            "count in it"
        )
    if timezone != pending:
        player.timezone, player.next_timezone, player.timezone_from = current, None, None
        if timezone != current:
            player.next_timezone = timezone
            player.timezone_from = rules.zone_change_at(now, current, timezone)
        session.flush()
    return player


TOKEN_DAYS = 365
"""How long a token lasts unless told (``DICECAM_TRACKER_TOKEN_DAYS``)."""

RELOGIN = (
    "log in again for a new token (POST /api/v1/tokens, the camera page's Morning Roll tracker "
    "login, or `dicecam submit --password`)"
)


EXPIRED_KEPT = timedelta(days=30)
"""How long an expired token is kept, so that it is refused as expired (not as unknown)."""


def issue_token(session: Session, player: Player, now: datetime, *, days: int = TOKEN_DAYS) -> str:
    """A new bearer token for ``player``, refused from ``token_expiry(now, days)`` on. Tokens
    of any player that expired over :data:`EXPIRED_KEPT` ago are removed (each login adds a
    row: nothing else would)."""
    session.execute(delete(Token).where(Token.expires_at < now - EXPIRED_KEPT))
    token = new_token()
    session.add(
        Token(
            token_hash=hash_token(token),
            player_id=player.id,
            created_at=now,
            expires_at=token_expiry(now, days),
        )
    )
    session.flush()
    return token


def token_expiry(now: datetime, days: int) -> datetime:
    """When a token made at ``now`` that lasts ``days`` days expires."""
    return now + timedelta(days=days)


def check_password(session: Session, name: str, password: str) -> Player:
    player = None
    if "\x00" not in name:  # no player has one; PostgreSQL would refuse the query (a 500)
        player = session.scalar(select(Player).where(Player.name_key == name_key(name)))
    if player is None or not verify_password(player.password_hash, password):
        raise Unauthorized("wrong player name or password")
    return player


def login(session: Session, name: str, password: str, now: datetime) -> tuple[Player, str]:
    player = check_password(session, name, password)
    return player, issue_token(session, player, now)


def revoke_token(session: Session, token: str | None) -> None:
    """Log out: the token stops working (an expired one is removed too)."""
    row = _token_row(session, token)
    session.delete(row)
    session.flush()


def revoke_tokens(session: Session, player: Player, *, keep: str | None = None) -> int:
    """Every token of ``player`` but ``keep`` stops working (their password changed, or they
    logged out everywhere); how many were revoked."""
    query = delete(Token).where(Token.player_id == player.id)
    if keep:
        query = query.where(Token.token_hash != hash_token(keep))
    gone = session.execute(query).rowcount
    session.flush()
    return gone


def change_password(
    session: Session,
    player: Player,
    password_hash: str,
    *,
    checked: str | None = None,
    keep: str | None = None,
) -> int:
    """``player``'s password is the one hashed as ``password_hash`` (:func:`hash_password`,
    called before: it is slow); every token of theirs but ``keep`` is revoked, so whoever knew
    the old password is logged out. How many tokens were revoked. ``checked``: the hash the
    current password was checked against; :class:`Conflict` when it changed since."""
    if checked is not None and player.password_hash != checked:
        raise Conflict(
            f"expected {player.name}'s password as it was checked, but it was changed meanwhile: "
            "nothing was changed now (try again with the password in force)"
        )
    player.password_hash = password_hash
    return revoke_tokens(session, player, keep=keep)


def reset_password(session: Session, name: str, password_hash: str) -> tuple[Player, int]:
    """An administrator's reset: the player ``name`` gets the password hashed as
    ``password_hash`` and loses every token (nothing else changes: not made an administrator);
    the player and how many tokens were revoked. :class:`NotFound` when no player has that
    name: none is created."""
    player = get_player(session, name)
    return player, change_password(session, player, password_hash)


def authenticate(session: Session, token: str | None, now: datetime) -> Player:
    """The player of bearer ``token``; :class:`Unauthorized` when it is missing, unknown,
    revoked or expired at ``now``."""
    row = _token_row(session, token)
    expires_at = utc(row.expires_at)
    if expires_at <= utc(now):
        days = (expires_at - utc(row.created_at)).days
        raise Unauthorized(
            f"this token expired on {expires_at:%Y-%m-%d %H:%M} UTC (a token lasts {days} "
            f"{'day' if days == 1 else 'days'}, "
            f"DICECAM_TRACKER_TOKEN_DAYS): {RELOGIN}"
        )
    return row.player


def _token_row(session: Session, token: str | None) -> Token:
    if not token:
        raise Unauthorized("expected an 'Authorization: Bearer <token>' header (log in first)")
    row = session.scalar(
        select(Token)
        .options(selectinload(Token.player))
        .where(Token.token_hash == hash_token(token))
    )
    if row is None:
        raise Unauthorized(f"unknown or revoked token: {RELOGIN}")
    return row


def ensure_admin(
    session: Session, name: str, password: str, timezone: str, now: datetime
) -> Player:
    """Create the administrator ``name``, or make an existing player one (password reset: their
    tokens are revoked when the password changes).

    Raises:
        pydantic.ValidationError: the name, password or time zone would not do for a player.
    """
    reg = Registration(name=name, password=password, timezone=timezone)  # checked either way
    player = session.scalar(select(Player).where(Player.name_key == name_key(name)))
    if player is None:
        return register(session, reg, now, is_admin=True)
    player.is_admin = True
    if not verify_password(player.password_hash, reg.password):  # stripped, as a login is
        change_password(session, player, hash_password(reg.password))  # every token revoked
    session.flush()
    return player
