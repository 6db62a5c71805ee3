"""``dicecam tracker --reset-password NAME``: a maintainer sets a player's new password on the
tracker's database (a real SQLite file a real server serves meanwhile), through ``main``."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa

from service.cli import main
from service.tracker import create_app

OLD, NEW = "old-password-1", "new-password-2"


@pytest.fixture
def site(sqlite_url, clock, serve, monkeypatch, tmp_path):
    """(http client of a tracker serving ``sqlite_url``, ``sqlite_url``); ``dicecam`` runs see
    an empty data dir and no password variables."""
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    for variable in ("DICECAM_TRACKER_NEW_PASSWORD", "DICECAM_TRACKER_ADMIN_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, sqlite_url
    app.state.db.dispose()


def join(http: httpx.Client, name: str) -> dict[str, str]:
    body = {"name": name, "password": OLD, "timezone": "UTC"}
    assert http.post("/api/v1/players", json=body).status_code == 201
    return bearer(login(http, name, OLD))


def login(http: httpx.Client, name: str, password: str) -> httpx.Response:
    return http.post("/api/v1/tokens", json={"name": name, "password": password})


def bearer(r: httpx.Response) -> dict[str, str]:
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def players(url: str) -> dict[str, bool]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(sa.text("SELECT name, is_admin FROM players")).all())
    engine.dispose()
    return {name: bool(admin) for name, admin in rows.items()}


def no_prompt(prompt: str) -> str:
    raise AssertionError(f"asked {prompt!r}")


def test_reset_sets_the_password_revokes_tokens_and_makes_no_admin(site, monkeypatch, capsys):
    http, url = site
    phone, laptop = join(http, "nina"), bearer(login(http, "nina", OLD))
    other = join(http, "omar")
    monkeypatch.setenv("DICECAM_TRACKER_NEW_PASSWORD", NEW)
    monkeypatch.setattr("getpass.getpass", no_prompt)
    assert main(["tracker", "--database-url", url, "--reset-password", "NINA"]) == 0
    out = capsys.readouterr()
    assert out.out == "password of nina reset; logged out everywhere (2 tokens revoked)\n"
    assert NEW not in out.out + out.err
    assert login(http, "nina", OLD).status_code == 401
    me = http.get("/api/v1/me", headers=bearer(login(http, "nina", NEW))).json()
    assert me["name"] == "nina" and me["is_admin"] is False
    for auth in (phone, laptop):
        assert http.get("/api/v1/me", headers=auth).status_code == 401
    assert http.get("/api/v1/me", headers=other).status_code == 200
    assert players(url) == {"nina": False, "omar": False}


def test_the_new_password_is_asked_twice_when_no_variable_gives_it(site, monkeypatch, capsys):
    http, url = site
    join(http, "pia")
    typed = iter([NEW, NEW])
    prompts: list[str] = []
    monkeypatch.setattr("getpass.getpass", lambda prompt: prompts.append(prompt) or next(typed))
    assert main(["tracker", "--database-url", url, "--reset-password", "pia"]) == 0
    assert prompts == ["new password for player pia: ", "the same password again for player pia: "]
    assert login(http, "pia", NEW).status_code == 201

    typed = iter(["third-password-3", "third-password-4"])  # a typo: nothing changes
    assert main(["tracker", "--database-url", url, "--reset-password", "pia"]) == 2
    err = capsys.readouterr().err
    assert "expected the same password typed twice, got two different ones" in err
    assert "third-password" not in err
    assert login(http, "pia", NEW).status_code == 201


def test_an_unknown_name_is_refused_and_creates_no_player(site, monkeypatch, capsys):
    http, url = site
    join(http, "quin")
    monkeypatch.setenv("DICECAM_TRACKER_NEW_PASSWORD", NEW)
    monkeypatch.setattr("getpass.getpass", no_prompt)
    assert main(["tracker", "--database-url", url, "--reset-password", "ghost"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dicecam tracker: error: no player named 'ghost': nothing was changed")
    assert "no player was created" in err and len(err.splitlines()) == 1
    assert players(url) == {"quin": False}
    monkeypatch.delenv("DICECAM_TRACKER_NEW_PASSWORD")  # no password is asked for either
    assert main(["tracker", "--database-url", url, "--reset-password", "ghost"]) == 1


def test_a_weak_new_password_changes_nothing(site, monkeypatch, capsys):
    http, url = site
    auth = join(http, "rosa")
    monkeypatch.setenv("DICECAM_TRACKER_NEW_PASSWORD", "short")
    assert main(["tracker", "--database-url", url, "--reset-password", "rosa"]) == 2
    err = capsys.readouterr().err
    assert "error: the new password: String should have at least 8 characters" in err
    assert "short" not in err
    assert login(http, "rosa", OLD).status_code == 201
    assert http.get("/api/v1/me", headers=auth).status_code == 200


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--reset-password", " "], "--reset-password: expected the player's name, got ' '"),
        (
            ["--reset-password", "a", "--create-admin", "b"],
            "expected --create-admin or --reset-password, got both",
        ),
        (["--reset-password", "a", "--timezone", "UTC"], "expected --timezone with --create-admin"),
    ],
)
def test_bad_usage_is_refused_before_the_database_is_touched(argv, error, tmp_path, capsys):
    db = tmp_path / "never.sqlite3"
    assert main(["tracker", "--database-url", f"sqlite:///{db}", *argv]) == 2
    assert error in capsys.readouterr().err
    assert not db.exists()


def test_a_password_given_with_spaces_around_logs_in_as_typed_at_login(site, monkeypatch):
    """A login strips the spaces around a password, as a registration does: a reset or an
    administrator's password set for an existing player must be stored stripped too (with
    --create-admin it was stored as given, and no login could match it)."""
    http, url = site
    join(http, "sam")
    join(http, "tia")
    monkeypatch.setenv("DICECAM_TRACKER_NEW_PASSWORD", "  spaced-pass-1  ")
    assert main(["tracker", "--database-url", url, "--reset-password", "sam"]) == 0
    assert login(http, "sam", "spaced-pass-1").status_code == 201
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "  spaced-pass-2  ")
    assert main(["tracker", "--database-url", url, "--create-admin", "tia"]) == 0
    assert login(http, "tia", "  spaced-pass-2  ").status_code == 201
    assert players(url) == {"sam": False, "tia": True}
