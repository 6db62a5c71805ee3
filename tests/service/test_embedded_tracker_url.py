"""Where the service finds its embedded tracker: the URL built from the address it listens on,
and a queued turn's tracker URL moved to it when the service now listens at another loopback
address on the same port (``service.api.submit``)."""

from __future__ import annotations

import pytest

from service.api.submit import _moved_here, embedded_tracker_url


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("192.168.1.20", "http://192.168.1.20:8000/tracker"),
        ("0.0.0.0", "http://127.0.0.1:8000/tracker"),  # listening everywhere: loopback
        ("::", "http://127.0.0.1:8000/tracker"),
        (None, "http://127.0.0.1:8000/tracker"),
        ("::1", "http://[::1]:8000/tracker"),  # an IPv6 address is bracketed in a URL
        ("fe80::1", "http://[fe80::1]:8000/tracker"),
    ],
)
def test_the_embedded_tracker_is_at_the_address_the_service_listens_on(host, url):
    assert embedded_tracker_url("http", host, 8000) == url


def test_a_turn_queued_for_this_service_at_another_loopback_address_moves_here():
    listen = ("192.168.1.20", 8000)
    moved = "http://192.168.1.20:8000/tracker"
    assert _moved_here("http://127.0.0.1:8000/tracker", listen) == moved
    assert _moved_here("http://localhost:8000/tracker/", listen) == moved
    assert _moved_here("http://[::1]:8000/tracker", listen) == moved
    assert _moved_here(moved, listen) is None  # already here


@pytest.mark.parametrize(
    ("url", "listen", "moved"),
    [
        ("http://127.0.0.1/tracker", ("192.168.1.20", 80), "http://192.168.1.20:80/tracker"),
        ("https://localhost/tracker", ("192.168.1.20", 443), "https://192.168.1.20:443/tracker"),
    ],
)
def test_a_url_without_a_port_names_its_schemes_default_port(url, listen, moved):
    """A queued turn's URL with no port is at 80 (http) or 443 (https): a service listening
    there now is its tracker, moved to the address it listens on."""
    assert _moved_here(url, listen) == moved
    assert _moved_here(url, (listen[0], 8000)) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:8000/tracker",  # another machine's tracker on the same port
        "http://tracker.example:8000/tracker",
        "http://127.0.0.1:9000/tracker",  # another port: another server
        "http://127.0.0.1:8000/other",  # not a tracker path
        "not a url at all ::",
    ],
)
def test_a_turn_queued_for_another_tracker_stays_with_it(url):
    assert _moved_here(url, ("192.168.1.20", 8000)) is None
