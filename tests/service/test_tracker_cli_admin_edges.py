"""Edges of ``dicecam tracker --create-admin`` and ``--reset-password`` run through ``main``
on a real SQLite file: the password's length and where it comes from, no terminal, a name the
tracker refuses, and what the reset says."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa

from service.cli import main
from service.tracker import create_app

OLD, NEW = "old-password-1", "new-password-2"


@pytest.fixture(autouse=True)
def no_variables(monkeypatch, tmp_path):
    """An empty data dir and no password variables for every ``dicecam`` run."""
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    for variable in ("DICECAM_TRACKER_NEW_PASSWORD", "DICECAM_TRACKER_ADMIN_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)


def players(url: str) -> dict[str, bool]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(sa.text("SELECT name, is_admin FROM players")).all())
    engine.dispose()
    return {name: bool(admin) for name, admin in rows.items()}


def no_prompt(prompt: str) -> str:
    raise AssertionError(f"asked {prompt!r}")


def test_a_seven_character_admin_password_is_refused_before_the_database(
    tmp_path, monkeypatch, capsys
):
    db = tmp_path / "never.sqlite3"
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "seven77")
    assert main(["tracker", "--database-url", f"sqlite:///{db}", "--create-admin", "tom"]) == 2
    err = capsys.readouterr().err
    assert "expected a password of at least 8 characters, got 7" in err
    assert "seven77" not in err
    assert not db.exists()
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "eight888")
    assert main(["tracker", "--database-url", f"sqlite:///{db}", "--create-admin", "tom"]) == 0
    assert players(f"sqlite:///{db}") == {"tom": True}


def test_an_empty_admin_password_variable_asks_at_the_prompt(tmp_path, monkeypatch, capsys):
    """``DICECAM_TRACKER_ADMIN_PASSWORD=`` (set, empty) is no password: it is asked for."""
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "")
    typed = iter([NEW, NEW])
    prompts: list[str] = []
    monkeypatch.setattr("getpass.getpass", lambda prompt: prompts.append(prompt) or next(typed))
    assert main(["tracker", "--database-url", url, "--create-admin", "tom"]) == 0
    assert prompts == [
        "new password for administrator tom: ",
        "the same password again for administrator tom: ",
    ]
    assert capsys.readouterr().out == "administrator tom ready\n"
    assert players(url) == {"tom": True}


def test_no_terminal_for_the_prompt_changes_nothing(tmp_path, monkeypatch, capsys):
    db = tmp_path / "never.sqlite3"

    def eof(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("getpass.getpass", eof)
    assert main(["tracker", "--database-url", f"sqlite:///{db}", "--create-admin", "tom"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "dicecam tracker: error: expected the password for administrator tom typed at the "
        "prompt, got none (no terminal?): nothing was changed\n"
    )
    assert not db.exists()


def test_an_admin_name_the_tracker_refuses_is_one_line_and_creates_nobody(
    tmp_path, monkeypatch, capsys
):
    url = f"sqlite:///{tmp_path / 'a.sqlite3'}"
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", NEW)
    assert main(["tracker", "--database-url", url, "--create-admin", "tom!"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicecam tracker: error: ") and len(err.splitlines()) == 1
    assert "expected a name of 1 to 40 letters" in err and "'tom!'" in err
    assert "Traceback" not in err
    assert players(url) == {}


@pytest.fixture
def site(sqlite_url, clock, serve):
    """(http client of a tracker serving ``sqlite_url``, ``sqlite_url``)."""
    app = create_app(sqlite_url, clock=clock, registrations_per_address=0)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, sqlite_url
    app.state.db.dispose()


def test_a_reset_says_one_token_in_the_singular(site, monkeypatch, capsys):
    http, url = site
    body = {"name": "una", "password": OLD, "timezone": "UTC"}
    assert http.post("/api/v1/players", json=body).status_code == 201
    assert http.post("/api/v1/tokens", json={"name": "una", "password": OLD}).status_code == 201
    monkeypatch.setenv("DICECAM_TRACKER_NEW_PASSWORD", NEW)
    assert main(["tracker", "--database-url", url, "--reset-password", "una"]) == 0
    assert capsys.readouterr().out == (
        "password of una reset; logged out everywhere (1 token revoked)\n"
    )


def test_an_unknown_name_is_named_as_stripped(site, monkeypatch, capsys):
    _, url = site
    monkeypatch.setattr("getpass.getpass", no_prompt)
    assert main(["tracker", "--database-url", url, "--reset-password", "  ghost "]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dicecam tracker: error: no player named 'ghost': nothing was changed")
    assert players(url) == {}


NOT_IANA = (
    "expected an IANA time zone name such as 'Europe/Paris' or 'America/Chicago', got "
    "'localtime' (the server's own zone, not one of IANA's)"
)


def test_localtime_as_the_admins_zone_is_refused_before_the_database(tmp_path, monkeypatch, capsys):
    """'localtime' (Debian's link to /etc/localtime) was checked by the tracker's ``zone``, not
    ``zone_to_pick``: the database was made and migrated before the registration refused it,
    and DICECAM_TRACKER_ADMIN_TIMEZONE=localtime was a setting taken."""
    db = tmp_path / "never.sqlite3"
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", NEW)
    args = ["tracker", "--database-url", f"sqlite:///{db}", "--create-admin", "tom"]
    assert main([*args, "--timezone", "localtime"]) == 2
    assert capsys.readouterr().err == f"dicecam tracker: error: {NOT_IANA}\n"
    assert not db.exists()
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_TIMEZONE", "localtime")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "DICECAM_TRACKER_ADMIN_TIMEZONE: " in err and NOT_IANA in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not db.exists()
