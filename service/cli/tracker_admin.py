"""The maintainer's options of ``dicecam tracker``: ``--create-admin NAME`` and
``--reset-password NAME``, each done on the tracker's database and exiting (no server)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from service.cli import UsageError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from service.settings import Settings

__all__ = ["add_admin_options", "check_admin_options", "run_admin"]

NEW_PASSWORD_VARIABLE = "DICECAM_TRACKER_NEW_PASSWORD"


def add_admin_options(p: argparse.ArgumentParser) -> None:
    """``--create-admin``, ``--timezone`` and ``--reset-password`` on the parser ``p``."""
    p.add_argument(
        "--create-admin",
        metavar="NAME",
        help="create (or promote) administrator NAME and exit; the password comes from "
        "DICECAM_TRACKER_ADMIN_PASSWORD or a prompt",
    )
    p.add_argument(
        "--timezone",
        default=None,
        metavar="ZONE",
        help="with --create-admin: the administrator's IANA time zone (default "
        "DICECAM_TRACKER_ADMIN_TIMEZONE, else UTC)",
    )
    p.add_argument(
        "--reset-password",
        metavar="NAME",
        help="set a new password for the existing player NAME (not made an administrator), "
        f"log them out everywhere, and exit; the password comes from {NEW_PASSWORD_VARIABLE} "
        "or a prompt",
    )


def check_admin_options(args: argparse.Namespace) -> None:
    """Refuse the options that do not go together, or an empty name (UsageError)."""
    names = {
        "--create-admin": ("administrator", args.create_admin),
        "--reset-password": ("player", args.reset_password),
    }
    for option, (who, name) in names.items():
        if name is not None and not name.strip():
            raise UsageError(f"{option}: expected the {who}'s name, got {name!r}")
    if args.create_admin is not None and args.reset_password is not None:
        raise UsageError(
            "expected --create-admin or --reset-password, got both (run one, then the other)"
        )
    if args.timezone is not None and args.create_admin is None:
        raise UsageError("expected --timezone with --create-admin (the administrator's time zone)")


def run_admin(args: argparse.Namespace, settings: Settings) -> int | None:
    """Do what ``--create-admin`` or ``--reset-password`` asks (the exit status), or None
    without either."""
    if args.create_admin is not None:
        return _create_admin(args, settings)
    if args.reset_password is not None:
        return _reset_password(args, settings)
    return None


def _new_password(given: str | None, who: str) -> str:
    """The password ``given`` by its variable, else typed twice at a prompt (not echoed)."""
    if given:
        return given
    import getpass

    try:
        password = getpass.getpass(f"new password for {who}: ")
        again = getpass.getpass(f"the same password again for {who}: ")
    except EOFError:  # no terminal, nothing on stdin
        raise UsageError(
            f"expected the password for {who} typed at the prompt, got none (no terminal?): "
            "nothing was changed"
        ) from None
    if password != again:
        raise UsageError("expected the same password typed twice, got two different ones")
    return password


def _open_database(url: str | None) -> Engine:
    """The tracker's database (``url``, else the default one), migrated; UsageError naming why
    it cannot be opened."""
    from sqlalchemy.exc import OperationalError

    from service.tracker.db import default_database_url, make_engine, migrate

    try:
        engine = make_engine(url or default_database_url())
        migrate(engine)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OperationalError as exc:
        raise UsageError(f"cannot open the tracker database: {exc.orig}") from exc
    return engine


def _create_admin(args: argparse.Namespace, settings: Settings) -> int:
    import os
    from datetime import UTC, datetime

    from pydantic import ValidationError

    from service.http_errors import describe_validation_errors
    from service.tracker import store
    from service.tracker.db import make_sessionmaker
    from service.tracker.rules import InvalidTimezone, zone_to_pick

    given = os.environ.get("DICECAM_TRACKER_ADMIN_PASSWORD")
    password = _new_password(given, f"administrator {args.create_admin}")
    if len(password) < 8:
        raise UsageError(f"expected a password of at least 8 characters, got {len(password)}")
    timezone = args.timezone or settings.tracker_admin_timezone
    try:
        zone_to_pick(timezone)  # before the database: 'localtime' too (Registration's rule)
    except InvalidTimezone as exc:
        raise UsageError(str(exc)) from exc
    engine = _open_database(args.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            player = store.ensure_admin(
                session, args.create_admin, password, timezone, datetime.now(UTC)
            )
            session.commit()
    except ValidationError as exc:
        raise UsageError(describe_validation_errors(exc.errors())) from None
    except store.TrackerError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        engine.dispose()
    print(f"administrator {player.name} ready")
    return 0


def _reset_password(args: argparse.Namespace, settings: Settings) -> int:
    """Set the player ``--reset-password NAME``'s new password and revoke their tokens; exit 1
    naming NAME when no player has it (none is created)."""
    from pydantic import ValidationError

    from service.http_errors import describe_validation_errors
    from service.tracker import store
    from service.tracker.db import make_sessionmaker
    from service.tracker.schemas import PasswordReset
    from service.tracker.security import hash_password

    name = args.reset_password
    engine = _open_database(args.database_url)
    sessions = make_sessionmaker(engine)
    try:
        with sessions() as session:  # an unknown name is said before a password is asked
            store.get_player(session, name.strip())
        password = _new_password(settings.tracker_new_password, f"player {name.strip()}")
        try:
            reset = PasswordReset(name=name, new_password=password)
        except ValidationError as exc:
            why = describe_validation_errors(exc.errors())
            raise UsageError(why.replace("'new_password'", "the new password")) from None
        hashed = hash_password(reset.new_password)  # slow on purpose
        with sessions() as session:
            player, revoked = store.reset_password(session, reset.name, hashed)
            session.commit()
    except store.NotFound as exc:
        print(
            f"dicecam tracker: error: {exc}: nothing was changed and no player was created "
            "(a player registers at /register; --create-admin makes an administrator)",
            file=sys.stderr,
        )
        return 1
    finally:
        engine.dispose()
    tokens = f"{revoked} {'token' if revoked == 1 else 'tokens'}"
    print(f"password of {player.name} reset; logged out everywhere ({tokens} revoked)")
    return 0
