"""Log the page's player in to the Morning Roll tracker the service submits to, embedded or
remote (``DICECAM_TRACKER_URL``): the page asks the service, which asks that tracker."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from service.api.errors import errors
from service.api.threads import calling_a_tracker
from service.http_errors import StrictBody
from service.tracker.schemas import MAX_PASSWORD

__all__ = ["router", "tracker_url"]

router = APIRouter(prefix="/tracker", tags=["tracker"])


def tracker_url(request: Request) -> str | None:
    """The remote tracker of the settings, else the embedded one at the address the request
    came in on (a LAN address when serving phones; loopback when listening everywhere)."""
    settings = request.app.state.settings
    if settings.tracker_url:
        return str(settings.tracker_url)
    if not getattr(request.app.state, "tracker_mounted", False):
        return None
    from service.api.submit import embedded_tracker_url

    host, port = request.scope.get("server") or ("127.0.0.1", request.url.port)
    return embedded_tracker_url(request.url.scheme, host, port)


class Login(StrictBody):
    name: str = Field(..., min_length=1, max_length=80)
    password: str = Field(..., min_length=1, max_length=MAX_PASSWORD)
    turns: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list,
        max_length=20,
        description="ids of the page's own turns the login is for: an open Morning Roll turn "
        "of the player takes the new token (it is submitted when it ends), and a finished one "
        "held back by a refused token is sent with it; no other turn gets the token",
    )


@router.post(
    "/tokens",
    status_code=201,
    summary="Log in to the tracker turns are submitted to",
    responses=errors(400, 401, 404, 413, 415, 422, 429, 503),
)
async def login(request: Request, body: Login) -> dict[str, Any]:
    """A bearer token for ``tracker_token`` when starting a turn, and the player it is for.
    The embedded tracker counts the login under the page's address (relayed with its key); a
    remote one under the service's."""
    url = tracker_url(request)
    if url is None:
        raise HTTPException(
            404, "no tracker: this server runs with --no-tracker and no DICECAM_TRACKER_URL"
        )
    make = getattr(request.app.state.turns.submitter, "client", None)
    if not callable(make):  # a submitter of the caller's own (tests): a plain client
        from service.tracker_client import TrackerClient

        outbox = Path(request.app.state.settings.data_dir).expanduser() / "outbox"
        make = partial(TrackerClient, outbox_dir=outbox)
    relay = _relay(request)
    try:
        out = await calling_a_tracker(request, _login, make(url), body, relay)
    except HTTPException as exc:
        if exc.status_code == 429 and not relay:  # the address it names is the service's
            exc.detail = f"{exc.detail} (the tracker at {url} counts every login sent through "
            exc.detail += "this service as from the service's address)"
        raise
    turns = request.app.state.turns  # the page's turns of that player take the token
    relogin = partial(turns.relogin, out["player"]["name"], url, out["token"], body.turns)
    await calling_a_tracker(request, relogin)
    return out


def _relay(request: Request) -> dict[str, str]:
    """The headers relaying the page's address to the embedded tracker; none for a remote one
    (``DICECAM_TRACKER_URL``: its key is the embedded tracker's alone)."""
    key = getattr(request.app.state, "tracker_relay_key", None)
    if request.app.state.settings.tracker_url or not key:
        return {}
    from service.tracker.throttle import relay_headers

    return relay_headers(key, request.client.host if request.client else None)


def _login(client: Any, body: Login, headers: dict[str, str]) -> dict[str, Any]:
    from service.tracker_client import (
        TrackerAuthError,
        TrackerRejected,
        TrackerThrottled,
        TrackerUnavailable,
    )

    with client:
        try:
            token = client.login(body.name, body.password, headers=headers)
            return {"token": token, "player": client.me()}
        except TrackerAuthError as exc:
            raise HTTPException(401, exc.detail) from None
        except TrackerThrottled as exc:  # the limit and the wait, for the page to say
            retry = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
            raise HTTPException(429, exc.detail, headers=retry) from None
        except TrackerUnavailable as exc:
            raise HTTPException(503, str(exc)) from None
        except TrackerRejected as exc:
            raise HTTPException(exc.status, exc.detail) from None
