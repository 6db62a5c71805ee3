"""The service has no login, so a website the player visits must not be able to use it from the
player's browser: DNS rebinding (the site's own name rebound to this machine: a Host the service
does not answer to) gets 400, and a cross-site write (a form or ``fetch`` from another origin)
gets 403. Proved over a real socket with forged headers, and in chromium with a real attacker
page on another origin."""

from __future__ import annotations

import base64
import socket

import httpx
import pytest
from pydantic import ValidationError

from service.app import create_app
from service.host_guard import HostPolicy
from service.settings import Settings

from dicecam_testing.turns import QueueReader, dice, jpeg

EVIL = "rebound.evil.example"
FORM = {"name": "mallory", "password": "hunter2hunter2", "timezone": "UTC"}


@pytest.fixture
def service(tmp_path, serve):
    """``service(**settings) -> (http, reader)``: the service with its embedded tracker on a
    real uvicorn server at 127.0.0.1 (``host`` is what the app is told it listens on)."""
    clients: list[httpx.Client] = []

    def start(**settings) -> tuple[httpx.Client, QueueReader]:
        reader = QueueReader()
        app = create_app(Settings(data_dir=tmp_path, **settings), reader=reader)
        http = httpx.Client(base_url=serve(app).url, timeout=30)
        clients.append(http)
        return http, reader

    yield start
    for http in clients:
        http.close()


def _port(http: httpx.Client) -> int:
    port = http.base_url.port
    assert port is not None
    return port


def _players(http: httpx.Client) -> list[str]:
    r = http.get("/tracker/api/v1/players/mallory/turns")
    assert r.status_code in (200, 404), r.text
    return ["mallory"] if r.status_code == 200 else []


# -- DNS rebinding ----------------------------------------------------------------------------


def test_a_rebound_name_can_neither_read_nor_change_the_service(service):
    http, _ = service()
    host = {"Host": f"{EVIL}:{_port(http)}"}
    r = http.get("/api/v1/health", headers=host)
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert repr(EVIL) in detail and f"DICECAM_ALLOWED_HOSTS={EVIL}" in detail, detail
    assert r.headers["x-content-type-options"] == "nosniff"  # inside the security headers
    assert http.post("/api/v1/turns", json={"player": "tom"}, headers=host).status_code == 400
    assert http.post("/tracker/register", data=FORM, headers=host).status_code == 400
    assert http.get("/tracker/api/v1/rounds", headers=host).status_code == 400
    assert http.get("/", headers=host).status_code == 400
    assert _players(http) == []  # nothing was registered


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]", "localhost."])
def test_loopback_names_at_any_port_are_served_when_listening_on_loopback(service, host):
    http, _ = service()
    for value in (f"{host}:{_port(http)}", host, f"{host}:1"):
        assert http.get("/api/v1/health", headers={"Host": value}).status_code == 200, value


@pytest.mark.parametrize("host", ["192.168.1.20", "10.0.0.7", f"{EVIL}", "[fe80::1]", "evil:80:1"])
def test_other_hosts_are_refused_when_listening_on_loopback(service, host):
    http, _ = service()
    r = http.get("/api/v1/health", headers={"Host": host})
    assert r.status_code == 400, host


def test_listening_everywhere_serves_ip_addresses_this_machine_and_local_names(service):
    http, _ = service(host="0.0.0.0")
    port = _port(http)
    me = socket.gethostname()
    for ok in ("192.168.1.20", "[fd00::5]", "127.0.0.1", "localhost", me, "dicebox.local"):
        r = http.get("/api/v1/health", headers={"Host": f"{ok}:{port}"})
        assert r.status_code == 200, ok
    for bad in (EVIL, "192.168.1.20.nip.io", "local", "localhost.evil.example"):
        r = http.get("/api/v1/health", headers={"Host": f"{bad}:{port}"})
        assert r.status_code == 400, bad


def test_listening_on_a_lan_address_serves_that_address_too():
    policy = HostPolicy.for_bind("192.168.1.20")
    assert policy.allows("192.168.1.20") and policy.allows("localhost")
    assert not policy.allows("192.168.1.21") and not policy.allows(EVIL)
    named = HostPolicy.for_bind("dicebox.example")
    assert named.allows("dicebox.example") and not named.allows(EVIL)


def test_allowed_hosts_adds_names_and_a_star_allows_any(service, monkeypatch):
    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", " Dice.Example.com , *.home.example ")
    http, _ = service()
    for ok in ("dice.example.com", "a.b.home.example", "localhost"):
        assert http.get("/api/v1/health", headers={"Host": ok}).status_code == 200, ok
    for bad in ("example.com", "home.example", "xdice.example.com", EVIL):
        assert http.get("/api/v1/health", headers={"Host": bad}).status_code == 400, bad
    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", "*")
    http, _ = service()
    assert http.get("/api/v1/health", headers={"Host": EVIL}).status_code == 200


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("http://dice.example.com", "without a scheme"),
        ("dice.example.com:8000", "without a port"),
        ("dice.example.com,,x", "an empty name"),
        ("dice example", "a host name"),
    ],
)
def test_a_bad_allowed_hosts_value_is_refused_naming_it(monkeypatch, value, words):
    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", value)
    with pytest.raises(ValidationError) as err:
        Settings()
    assert "allowed_hosts" in str(err.value) and words in str(err.value)


# -- cross-site writes ------------------------------------------------------------------------


def _turn(http: httpx.Client) -> str:
    r = http.post("/api/v1/turns", json={"player": "tom", "game": "morning-roll"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _rolls(http: httpx.Client, turn: str) -> int:
    return int(http.get(f"/api/v1/turns/{turn}").json()["rolls"])


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},  # a sandboxed frame, a file:// page
        {"Origin": "http://127.0.0.1:1"},  # another port: another origin
        {"Sec-Fetch-Site": "cross-site"},  # a browser that sends no Origin
    ],
)
def test_a_cross_site_form_post_changes_nothing(service, headers):
    http, reader = service()
    turn = _turn(http)
    reader.rolls.append(dice([1, 5, 2, 3, 4, 6]))
    photo = {"photo": ("roll.jpg", jpeg(), "image/jpeg")}  # multipart: no CORS preflight
    r = http.post(f"/api/v1/turns/{turn}/rolls", files=photo, headers=headers)
    assert r.status_code == 403, r.text[:200]
    assert "cross-site" in r.json()["detail"]
    assert _rolls(http, turn) == 0
    r = http.post("/tracker/register", data=FORM, headers=headers)
    assert r.status_code == 403
    assert _players(http) == []
    r = http.delete("/api/v1/calibration", headers=headers)
    assert r.status_code == 403
    # reading is not refused (the browser keeps another site's page from seeing the answer)
    assert http.get("/api/v1/health", headers=headers).status_code == 200


def test_same_origin_and_origin_less_writes_are_served(service):
    http, _ = service(allowed_hosts="dice.example.com")
    port = _port(http)
    for headers in (
        {},  # curl, the CLI, the tracker client
        {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
        {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"},
        {"Origin": "https://dice.example.com", "Host": "dice.example.com:443"},
        {"Sec-Fetch-Site": "none"},  # typed in the address bar
    ):
        r = http.post(
            "/api/v1/turns", json={"player": "tom", "game": "morning-roll"}, headers=headers
        )
        assert r.status_code == 201, (headers, r.text)
    r = http.post("/tracker/register", data=FORM, headers={"Origin": f"http://127.0.0.1:{port}"})
    assert r.status_code == 201 and _players(http) == ["mallory"]


def test_an_origin_of_another_scheme_at_the_same_host_and_port_is_cross_site(service):
    """Only an http(s) page is the service's own, whatever host and port its Origin names."""
    http, _ = service()
    port = _port(http)
    for scheme in ("ws", "chrome-extension"):
        r = http.post(
            "/api/v1/turns",
            json={"player": "tom", "game": "morning-roll"},
            headers={"Origin": f"{scheme}://127.0.0.1:{port}"},
        )
        assert r.status_code == 403, (scheme, r.text)
        assert f"{scheme}://127.0.0.1:{port}" in r.json()["detail"]


# -- in a real browser ------------------------------------------------------------------------

ATTACK = """<!doctype html><title>cute cats</title><script>
const service = "SERVICE";
async function attack() {
  const register = new FormData();
  register.append("name", "mallory");
  register.append("password", "hunter2hunter2");
  register.append("timezone", "UTC");
  const roll = new FormData();
  const jpeg = Uint8Array.from(atob("PHOTO"), (c) => c.charCodeAt(0));
  roll.append("photo", new Blob([jpeg], {type: "image/jpeg"}), "r.jpg");
  for (const [path, body] of [["/tracker/register", register], ["/api/v1/turns/TURN/rolls", roll]])
    try { await fetch(service + path, {method: "POST", mode: "no-cors", body}); } catch (e) {}
  document.title = "done";
}
attack();
</script>"""


def test_a_page_of_another_site_cannot_write_to_the_service_from_the_browser(
    service, serve, chromium
):
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    http, reader = service()
    turn = _turn(http)
    reader.rolls.append(dice([1, 5, 2, 3, 4, 6]))
    html = (
        ATTACK.replace("SERVICE", str(http.base_url).rstrip("/"))
        .replace("TURN", turn)
        .replace("PHOTO", base64.b64encode(jpeg()).decode())
    )
    site = Starlette(routes=[Route("/", lambda request: HTMLResponse(html))])
    evil = serve(site).url.replace("127.0.0.1", "localhost")  # another origin, another site
    page = chromium.new_page()
    page.goto(evil)
    page.wait_for_function("document.title === 'done'", timeout=10_000)
    page.close()
    assert (_players(http), _rolls(http, turn)) == ([], 0)


def test_the_standalone_tracker_is_guarded_as_the_mounted_one(tmp_path, monkeypatch, serve):
    import uvicorn

    from service.cli import main

    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DICECAM_TRACKER_ADMIN_NAME", raising=False)
    ran: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(app=app, **kw))
    db = f"sqlite:///{tmp_path / 'alone.sqlite3'}"
    assert main(["tracker", "--database-url", db, "--host", "127.0.0.1", "--port", "1"]) == 0
    try:
        with httpx.Client(base_url=serve(ran["app"]).url, timeout=30) as http:
            r = http.get("/api/v1/rounds", headers={"Host": EVIL})
            assert r.status_code == 400 and r.headers["x-frame-options"] == "DENY"
            r = http.post("/register", data=FORM, headers={"Origin": "http://evil.example"})
            assert r.status_code == 403
            assert http.get("/api/v1/players/mallory/turns").status_code == 404
            assert http.post("/register", data=FORM).status_code == 201
    finally:
        ran["app"].state.db.dispose()


def test_the_address_a_connection_came_in_on_is_served_whatever_the_bind_name():
    """Listening on a name, the service logs in to its embedded tracker at the IP address the
    page's request came in on (``service.api.tracker_login.tracker_url``)."""
    import asyncio

    from service.host_guard import HostGuardMiddleware

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = HostGuardMiddleware(app, HostPolicy.for_bind("dicebox.example"))

    def status(host: str) -> int:
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/",
            "headers": [(b"host", host.encode())],
            "server": ("192.168.1.20", 8000),
        }
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b""}

        asyncio.run(guard(scope, receive, send))
        return sent[0]["status"]

    assert status("192.168.1.20:8000") == 204 and status("dicebox.example:8000") == 204
    assert status("192.168.1.21:8000") == 400 and status(f"{EVIL}:8000") == 400


@pytest.mark.parametrize("command", ["serve", "tracker"])
def test_a_bad_allowed_hosts_value_stops_the_command_in_one_line(
    tmp_path, monkeypatch, capsys, command
):
    from service.cli import main

    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", "dice.example.com:8000")
    assert main([command, "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "DICECAM_ALLOWED_HOSTS" in err and "without a port" in err and "\n" not in err
    assert "Value error" not in err and err.count("dice.example.com:8000") == 1, err
