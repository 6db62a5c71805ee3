"""``dicecam tracker`` (standalone Morning Roll tracker), ``dicecam submit``, ``dicecam outbox``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from service.cli import UsageError, check_port, given_path, use_colors
from service.cli.tracker_admin import add_admin_options, check_admin_options, run_admin

if TYPE_CHECKING:
    from service.tracker_client import TrackerRejected

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tracker",
        help="run the Morning Roll tracker on its own",
        description="Run the Morning Roll tracker (JSON API under /api/v1 and HTML pages). "
        "The database defaults to DICECAM_TRACKER_DATABASE_URL or a SQLite file in the data dir.",
    )
    p.add_argument(
        "--host",
        default=None,
        help="address to listen on (default DICECAM_HOST, else 127.0.0.1; 0.0.0.0 for other "
        "machines)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="port (default DICECAM_PORT, else 8000; 0: a free one, said in the line "
        "'serving ...')",
    )
    p.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="sqlite:///file or postgresql+psycopg://... (default DICECAM_TRACKER_DATABASE_URL, "
        "else tracker.sqlite3 in the data dir: DICECAM_DATA_DIR, else ~/.dicecam)",
    )
    add_admin_options(p)  # --create-admin, --timezone, --reset-password
    p.set_defaults(func=run_tracker)

    s = subparsers.add_parser(
        "submit",
        help="submit a Morning Roll score to a tracker (through the outbox)",
        description="Submit today's Morning Roll score. The turn is written to the outbox first; "
        "if the tracker is down it stays there until `dicecam outbox deliver`.",
    )
    _client_args(s)
    s.add_argument("--player", required=True, metavar="NAME", help="your player name")
    s.add_argument(
        "--score",
        type=int,
        required=True,
        metavar="POINTS",
        help="today's turn score (0 or more, in steps of 50)",
    )
    s.add_argument(
        "--comment", default="", metavar="TEXT", help="a note stored with the turn (default: none)"
    )
    s.add_argument(
        "--password", default=None, metavar="PW", help="log in with this password (else a token)"
    )
    s.set_defaults(func=run_submit)

    o = subparsers.add_parser(
        "outbox",
        help="list or deliver the turns waiting in the outbox",
        description="List queued, delivered and rejected turns, or deliver the queued ones.",
    )
    o.add_argument(
        "action",
        choices=["list", "deliver"],
        help="list: print every turn of the outbox as a JSON line (no tracker needed); "
        "deliver: send the queued turns to the tracker",
    )
    _client_args(o)
    o.add_argument(
        "--player",
        default=None,
        metavar="NAME",
        help="deliver: log in as this player (with --password)",
    )
    o.add_argument(
        "--password", default=None, metavar="PW", help="deliver: log in with this password"
    )
    o.add_argument(
        "--retarget",
        action="store_true",
        help="deliver: send turns queued for another tracker URL to this one (their URL was wrong)",
    )
    o.set_defaults(func=run_outbox)


def _client_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--url",
        default=None,
        help="the tracker's address, e.g. http://127.0.0.1:8000/tracker for the one in "
        "`dicecam serve` (default DICECAM_TRACKER_URL, else none: one of the two is needed)",
    )
    p.add_argument(
        "--token",
        default=None,
        help="a login token the tracker gave (POST /api/v1/tokens; default "
        "DICECAM_TRACKER_TOKEN, else none: log in with --player and --password)",
    )
    p.add_argument(
        "--outbox-dir",
        type=given_path,
        metavar="DIR",
        help="outbox folder (default <data dir>/outbox; the data dir: DICECAM_DATA_DIR, else "
        "~/.dicecam)",
    )


def run_tracker(args: argparse.Namespace) -> int:
    from service.settings import Settings

    check_port(args.port)
    check_admin_options(args)
    settings = Settings()
    if (done := run_admin(args, settings)) is not None:
        return done
    from service.cli.serve import held_port

    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    with held_port(host, port) as port:  # --port 0: the one the system chose
        return _serve_tracker(args, host, port)


def _serve_tracker(args: argparse.Namespace, host: str, port: int) -> int:
    """Serve the tracker on ``host:port`` (held by :func:`service.cli.serve.held_port`)."""
    from sqlalchemy.exc import OperationalError

    from service.cli.serve import run_uvicorn
    from service.tracker import create_app

    try:
        app = create_app(args.database_url, bind=host)  # Host checked, refusals logged
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:  # e.g. a data dir that cannot be made
        raise UsageError(f"cannot open the tracker database: {exc}") from None
    except OperationalError as exc:
        raise UsageError(f"cannot open the tracker database: {exc.orig}") from exc
    from service.logs import log_config

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"dicecam: serving the tracker at http://{shown}:{port}/", flush=True)
    run_uvicorn(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=log_config("warning"),
        use_colors=use_colors(),
    )
    return 0


def _client(args: argparse.Namespace):
    from service.settings import Settings
    from service.tracker_client import TrackerClient

    settings = Settings()
    url = args.url or settings.tracker_url
    if not url:
        raise UsageError("expected a tracker URL: --url or DICECAM_TRACKER_URL")
    try:
        return TrackerClient(
            url, token=args.token or settings.tracker_token, outbox_dir=args.outbox_dir
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _not_a_tracker(url: str, answer: str, *, hint: bool = True) -> UsageError:
    """The one-line error of a ``url`` that is no tracker's, which gave ``answer`` (with
    ``hint``: where `dicecam serve`'s tracker is, if ``url`` is not it)."""
    where = ""
    if hint and not url.endswith("/tracker"):
        where = f"; the tracker of `dicecam serve` is at {url}/tracker"
    return UsageError(f"--url: expected a tracker, got {url}, which {answer}{where}")


def _login_refused(url: str, exc: TrackerRejected) -> UsageError:
    """The one-line error of a login the tracker at ``url`` refused: a wrong password, a name
    or password the tracker does not take (422: the tracker's own check of the login's
    fields), or a URL that is no tracker's (`dicecam serve`'s own address, not its
    ``/tracker``)."""
    from service.tracker_client import TrackerAuthError

    if isinstance(exc, TrackerAuthError):
        return UsageError(exc.detail)
    answer = f"refused the login ({exc.status}: {exc.detail})"
    if exc.status == 422:  # a tracker that checked the fields: the address is right
        return UsageError(f"--player/--password: the tracker at {url} {answer}")
    return _not_a_tracker(url, answer, hint=exc.status == 404)


def run_submit(args: argparse.Namespace) -> int:
    from service.tracker_client import (
        TrackerAuthError,
        TrackerRejected,
        TrackerThrottled,
        TrackerUnavailable,
        TurnSubmission,
    )

    if not args.player.strip():  # the tracker would refuse it, after it was queued
        raise UsageError(f"--player: expected your player name, got {args.player!r}")
    if args.score < 0 or args.score % 50:  # the tracker would refuse it, after it was queued
        raise UsageError(
            f"expected a Morning Roll score, 0 or more in steps of 50, got {args.score}"
        )
    client = _client(args)
    turn = TurnSubmission(player=args.player, score=args.score, comment=args.comment)
    try:
        if args.password:
            client.login(args.player, args.password)
    except TrackerUnavailable as exc:  # no token today, but the turn must not be lost
        client.queue(turn)
        when = "once the tracker is back"
        if isinstance(exc, TrackerThrottled):  # not down: the player's logins wait a while
            when = f"in {exc.retry_after} s" if exc.retry_after else "after the wait it names"
        print(
            f"queued in the outbox, not delivered yet (could not log in): {exc}; deliver it with "
            f"`dicecam outbox deliver` {when}",
            file=sys.stderr,
        )
        return 1
    except TrackerRejected as exc:  # a wrong password, or no tracker at --url: nothing queued
        raise _login_refused(client.base_url, exc) from exc
    try:
        if not client.token:
            raise UsageError("expected --password, --token or DICECAM_TRACKER_TOKEN to submit")
        result = client.submit_turn(turn)
    except TrackerAuthError as exc:  # an expired or revoked token: the turn waits in the outbox
        print(
            f"queued in the outbox, not delivered: the tracker refused the token ({exc.detail}); "
            "log in again to deliver it: `dicecam outbox deliver --player NAME --password ...`",
            file=sys.stderr,
        )
        return 1
    except TrackerUnavailable as exc:
        print(
            f"queued in the outbox, not delivered yet: {exc}; {_deliver_later(exc)}",
            file=sys.stderr,
        )
        return 1
    except TrackerRejected as exc:
        print(f"refused: {exc.detail}", file=sys.stderr)
        return 1
    print(f"stored: {result['player']} {result['score']} on {result['day']} (turn {result['id']})")
    return 0


def _deliver_later(exc: Exception) -> str:
    """How to deliver a turn ``submit`` queued: once the tracker is back, or, queued for an
    address that answered as no tracker does (``exc`` raised while that was found), with the
    tracker's address and ``--retarget``."""
    from service.tracker_client import TrackerNotFound

    if isinstance(exc.__context__, TrackerNotFound):
        return "send it to the tracker with `dicecam outbox deliver --url TRACKER --retarget`"
    return "deliver it with `dicecam outbox deliver` once the tracker is back"


def run_outbox(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list_outbox(args)
    from service.tracker_client import (
        TrackerAuthError,
        TrackerNotFound,
        TrackerRejected,
        TrackerUnavailable,
    )

    if bool(args.player) != bool(args.password):
        raise UsageError("expected --player and --password together, to log in")
    client = _client(args)
    try:
        if args.password:
            client.login(args.player, args.password)
    except TrackerUnavailable as exc:
        print(
            f"nothing delivered, the turns stay queued (could not log in): {exc}", file=sys.stderr
        )
        return 1
    except TrackerRejected as exc:
        raise _login_refused(client.base_url, exc) from exc
    if not client.token:  # a tracker takes a turn only with its player's token
        raise UsageError(
            "expected --token, --player with --password, or DICECAM_TRACKER_TOKEN to deliver "
            "(a tracker takes a turn only with its player's token): nothing was sent, the "
            "outbox is as it was"
        )
    try:
        report = client.deliver_pending(force=True, retarget=args.retarget)
    except TrackerAuthError as exc:
        raise UsageError(exc.detail) from exc
    except TrackerNotFound as exc:  # nothing sent or retargeted: the turns are as they were
        answer = f"answered GET /api/v1/me with {exc.status} ({exc.detail}), so nothing was sent"
        raise _not_a_tracker(client.base_url, f"{answer} and the turns stay queued") from exc
    print(
        f"delivered {len(report.delivered)}, rejected {len(report.rejected)}, still queued "
        f"{len(report.pending) + len(report.other_players) + len(report.other_trackers)}"
    )
    for key, why in report.rejected.items():
        print(f"rejected {key}: {why}", file=sys.stderr)
    for key, why in report.pending_errors.items():
        print(f"still queued {key}: {why}", file=sys.stderr)
    for key, player in report.other_players.items():
        print(
            f"left queued {key}: a turn of {player!r}, whose own token must deliver it",
            file=sys.stderr,
        )
    for key, url in report.other_trackers.items():
        print(
            f"left queued {key}: queued for the tracker at {url} (deliver it with --url {url}, "
            "or send it here with --retarget)",
            file=sys.stderr,
        )
    waiting = report.pending or report.other_players or report.other_trackers
    return 1 if waiting or report.rejected else 0


def _list_outbox(args: argparse.Namespace) -> int:
    """Print every turn in the outbox as a JSON line; reads the folder only (no tracker)."""
    from service.tracker_client import Outbox

    outbox = Outbox(args.outbox_dir)
    for state in ("pending", "rejected", "delivered"):
        for e in outbox.entries(state):
            print(
                json.dumps(
                    {
                        "state": state,
                        "key": e.key,
                        "tracker": e.base_url,
                        "player": e.turn.get("player"),
                        "score": e.turn.get("score"),
                        "attempts": e.attempts,
                        "error": e.last_error,
                    }
                )
            )
    for path in outbox.unreadable():
        print(f"unreadable outbox file (left as is): {path}", file=sys.stderr)
    return 0
