"""``TrackerApi``: a tracker's plain HTTP calls (register, log in and out, the standings, a
player's history), with the bearer token kept for them and the tracker's answers turned into
the errors of :mod:`service.tracker_client.errors`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self
from urllib.parse import quote

import httpx

from service.http_errors import whole_number
from service.tracker_client.errors import (
    TrackerAuthError,
    TrackerNotFound,
    TrackerRejected,
    TrackerThrottled,
    TrackerUnavailable,
)

__all__ = ["TrackerApi"]

_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


def _detail(resp: httpx.Response) -> str:
    try:
        detail = resp.json().get("detail")
    except Exception:
        detail = None
    if detail is None:
        return resp.text[:300] or resp.reason_phrase
    return detail if isinstance(detail, str) else str(detail)


def _retry_after(resp: httpx.Response) -> int | None:
    """``Retry-After`` in seconds; None when absent or not a number of seconds (a date, or
    more digits than ``int()`` converts)."""
    try:
        seconds = whole_number(resp.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class TrackerApi:
    """Talks to a dicecam tracker at ``base_url`` (e.g. ``http://127.0.0.1:8000/tracker``),
    one request per call, no outbox (:class:`~service.tracker_client.TrackerClient` adds it).

    Example (not run: needs a running tracker):
        >>> api = TrackerApi("http://127.0.0.1:8000/tracker")  # doctest: +SKIP
        >>> api.login("heather", "correct horse")  # doctest: +SKIP
        >>> api.leaderboard()["round"]  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"expected a tracker URL starting with http:// or https://, got {base_url!r}"
            )
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = kw.pop("headers", {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            resp = self._http.request(method, path, headers=headers, **kw)
        except httpx.TransportError as exc:
            raise TrackerUnavailable(f"cannot reach the tracker at {self.base_url}: {exc}") from exc
        if resp.status_code in _RETRY_STATUS:
            detail = _detail(resp)
            message = f"tracker at {self.base_url} answered {resp.status_code}: {detail}"
            if resp.status_code == 429:
                raise TrackerThrottled(message, detail, _retry_after(resp))
            raise TrackerUnavailable(message)
        if resp.status_code == 401:
            raise TrackerAuthError(401, _detail(resp))
        if resp.status_code >= 400:
            raise TrackerRejected(resp.status_code, _detail(resp))
        return resp

    def register(self, name: str, password: str, timezone: str) -> dict[str, Any]:
        """Create an account on the tracker; returns the player as the tracker stored it."""
        body = {"name": name, "password": password, "timezone": timezone}
        return self._request("POST", "/api/v1/players", json=body).json()

    def login(self, name: str, password: str, *, headers: Mapping[str, str] | None = None) -> str:
        """Log in; the client keeps the bearer token for later calls and returns it.
        ``headers``: sent with the login (a service relaying its client's address).

        Raises:
            TrackerThrottled: too many wrong passwords lately (429), the wait in it.
        """
        body = {"name": name, "password": password}
        sent = dict(headers or {})
        self.token = self._request("POST", "/api/v1/tokens", json=body, headers=sent).json()[
            "token"
        ]
        return self.token

    def logout(self) -> None:
        """Revoke this client's token on the tracker."""
        self._request("DELETE", "/api/v1/tokens/current")
        self.token = None

    def leaderboard(self, round: int | None = None, *, tz: str | None = None) -> dict[str, Any]:
        """The standings of ``round``, else of the round under way for a viewer in ``tz`` (an
        IANA zone: around New Year it is the next round far east of UTC, UTC's by default)."""
        params: dict[str, Any] = {} if round is None else {"round": round}
        if tz is not None:
            params["tz"] = tz
        return self._request("GET", "/api/v1/leaderboard", params=params).json()

    def history(
        self, player: str, *, round: int | None = None, page_size: int = 500
    ) -> dict[str, Any]:
        """``player``'s turns, newest first, all of them (or of ``round``, a calendar year).

        The tracker answers a page at a time (``page_size`` turns, at most 500); this follows
        the pages to the last, one request each, and returns the last page's body with
        ``turns`` the whole history.
        """
        path = f"/api/v1/players/{quote(player, safe='')}/turns"
        params: dict[str, Any] = {"limit": page_size}
        if round is not None:
            params["round"] = round
        turns: list[dict[str, Any]] = []
        while True:
            page = self._request("GET", path, params=params).json()
            turns += page["turns"]
            if page.get("next_before") is None:  # the last page (or a tracker without pages)
                return {**page, "turns": turns}
            params["before"] = page["next_before"]

    def me(self) -> dict[str, Any]:
        """The player this client's token belongs to, as the tracker stored them."""
        return self._request("GET", "/api/v1/me").json()

    def _tracker_player(self) -> str:
        """The name of the player this client's token belongs to, which proves ``base_url`` a
        tracker's; :class:`TrackerNotFound` when it answers as no tracker does, 401 (no token,
        or a wrong one) :class:`TrackerAuthError`."""
        try:
            body = self.me()
        except TrackerAuthError:
            raise
        except TrackerRejected as exc:
            raise TrackerNotFound(self.base_url, exc.status, exc.detail) from None
        except ValueError:  # not JSON
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise TrackerNotFound(self.base_url, 200, "an answer with no player's name")
        return body["name"]
