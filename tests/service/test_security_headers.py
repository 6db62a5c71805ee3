"""Security headers over a real socket: every answer of the service and of the tracker (embedded
or alone) forbids MIME sniffing and framing by another site (clickjacking of the add-roll and
register forms, of the camera page); the tracker's pages allow only their own script, by hash."""

from __future__ import annotations

import base64
import hashlib
import re

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker_app

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader


def _common(r: httpx.Response) -> None:
    assert r.headers["x-content-type-options"] == "nosniff", r.url
    assert r.headers["x-frame-options"] == "DENY", r.url
    assert r.headers["referrer-policy"] == "same-origin", r.url
    (csp,) = r.headers.get_list("content-security-policy")  # one policy, not two stacked
    assert "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp, csp


@pytest.fixture
def service(tmp_path):
    app = create_app(Settings(data_dir=tmp_path), reader=QueueReader())
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as http:
        yield http


@pytest.mark.parametrize(
    "path",
    ["/", "/static/app.js", "/api/v1/health", "/api/v1/config", "/api/v1/turns/nope", "/nothing"],
)
def test_the_service_answers_carry_the_headers(service, path):
    r = service.get(path)
    _common(r)
    csp = r.headers["content-security-policy"]
    assert "script-src" not in csp and "default-src 'self'" in csp  # the page's own scripts only
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["form-action"] == "'self'"  # no form of the page posts elsewhere
    assert directives["object-src"] == "'none'"  # no plug-in content
    assert directives["img-src"] == "'self' blob: data:"  # the photos taken and shown


@pytest.mark.parametrize("path", ["/tracker/", "/tracker/add", "/tracker/register", "/tracker/x"])
def test_the_embedded_trackers_pages_allow_only_their_own_script(service, path):
    r = service.get(path)
    _common(r)
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "form-action 'self'" in csp
    scripts = re.findall(r"<script>(.*?)</script>", r.text, flags=re.S)
    allowed = set(re.findall(r"'sha256-([^']+)'", csp))
    for script in scripts:  # the 8am-8pm script of the game pages runs: its hash is allowed
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert digest in allowed
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]


def test_a_posted_form_and_the_json_api_of_the_standalone_tracker_carry_them(sqlite_url, serve):
    app = create_tracker_app(sqlite_url)
    try:
        with httpx.Client(base_url=serve(app).url, timeout=30) as http:
            r = http.post("/register", data={"name": "<b>", "password": "x", "timezone": "UTC"})
            assert r.status_code == 422
            _common(r)
            assert "default-src 'none'" in r.headers["content-security-policy"]
            for r in (http.get("/api/v1/rollcall"), http.get("/api/v1/turns/1/rolls/0/photo.jpg")):
                _common(r)
    finally:
        app.state.db.dispose()
