"""The service's ``DICECAM_*`` settings at their bounds: each taken at its edge and refused past
it in one line naming the variable; paths with ``~`` are the user's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import settings_error
from service.settings import Settings


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


EDGES = [
    # (variable, taken at the edge, refused past it)
    ("PORT", "0", "-1"),
    ("PORT", "65535", "65536"),
    ("MAX_UPLOAD_MB", "0.001", "0"),
    ("MAX_UPLOAD_MB", "1000", "inf"),
    ("MAX_UPLOAD_MB", "20", "nan"),
    ("TRACKER_TOKEN_DAYS", "1", "0"),
    ("TRACKER_TOKEN_DAYS", "36500", "36501"),
    ("TRACKER_LOGIN_FAILURES_PER_ADDRESS", "0", "-1"),
    ("TRACKER_LOGIN_FAILURES_PER_ADDRESS", "1000000", "1000001"),
    ("TRACKER_REGISTRATIONS_PER_ADDRESS", "0", "-1"),
    ("TRACKER_REGISTRATIONS_PER_ADDRESS", "1000000", "1000001"),
    ("KEEP_PHOTOS_DAYS", "0", "-1"),
    ("KEEP_PHOTOS_DAYS", "36500", "36501"),
    ("OUTBOX_RETRY_S", "0", "-0.5"),
    ("OUTBOX_RETRY_S", "3600", "inf"),
    ("OUTBOX_RETRY_S", "30", "nan"),
    ("LIVE_SETTLE_FRAMES", "1", "0"),
    ("LIVE_SETTLE_FRAMES", "100", "101"),
    ("MISSING_DICE", "ask", "keep"),
]


@pytest.mark.parametrize(("name", "edge", "past"), EDGES)
def test_each_bound_is_taken_at_its_edge_and_refused_past_it_naming_the_variable(
    name: str, edge: str, past: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(f"DICECAM_{name}", edge)
    taken = getattr(Settings(), name.lower())
    assert str(taken) == edge or float(taken) == float(edge)
    monkeypatch.setenv(f"DICECAM_{name}", past)
    with pytest.raises(ValueError) as refused:
        Settings()
    line = settings_error(refused.value)
    assert line is not None and line.startswith(f"DICECAM_{name}: "), line
    assert repr(past) in line, line


def test_a_tracker_url_loses_its_trailing_slashes(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DICECAM_TRACKER_URL", " http://192.168.1.20:8000/tracker// ")
    assert Settings().tracker_url == "http://192.168.1.20:8000/tracker"


def test_a_data_dir_under_home_that_is_a_file_is_refused(
    _home: Path, monkeypatch: pytest.MonkeyPatch
):
    (_home / "dice").write_text("a file")
    monkeypatch.setenv("DICECAM_DATA_DIR", "~/dice")
    with pytest.raises(ValueError) as refused:
        Settings()
    assert "DICECAM_DATA_DIR: expected a folder, got '~/dice', which is a file" in str(
        settings_error(refused.value)
    )


def test_a_file_setting_under_home_that_is_a_folder_is_refused(
    _home: Path, monkeypatch: pytest.MonkeyPatch
):
    (_home / "turns").mkdir()
    monkeypatch.setenv("DICECAM_TURNS_DATABASE", "~/turns")
    with pytest.raises(ValueError) as refused:
        Settings()
    assert "DICECAM_TURNS_DATABASE: expected a file, got '~/turns', which is a folder" in str(
        settings_error(refused.value)
    )


def test_files_given_with_a_tilde_are_in_the_home_folder(
    _home: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("DICECAM_TURNS_DATABASE", "~/t.sqlite3")
    monkeypatch.setenv("DICECAM_CALIBRATION", "~/cal.json")
    settings = Settings()
    assert settings.turns_database_file() == _home / "t.sqlite3"
    assert settings.calibration_file() == _home / "cal.json"
    monkeypatch.delenv("DICECAM_TURNS_DATABASE")
    monkeypatch.delenv("DICECAM_CALIBRATION")
    monkeypatch.setenv("DICECAM_DATA_DIR", "~/d")
    settings = Settings()
    assert settings.turns_database_file() == _home / "d" / "turns.sqlite3"
    assert settings.calibration_file() == _home / "d" / "calibration.json"
