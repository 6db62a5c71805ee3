"""A ``DICECAM_*`` variable the program cannot use stops the command that reads it with one line
naming the variable, what was expected and what came (exit 2, no traceback), before anything
starts; ``dicecam serve`` and ``dicecam tracker`` say so of a port in use, an address they
cannot listen on and a data dir they cannot write too. README's *Settings* section lists every
variable the code reads, each with the code's default."""

from __future__ import annotations

import importlib
import os
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from service.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_server(monkeypatch):
    """A command that took every setting would serve for good: it fails the test instead."""
    import uvicorn

    def served(*args, **kwargs):
        raise AssertionError("the command started serving with a setting it should refuse")

    monkeypatch.setattr(uvicorn, "run", served)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize(
    ("command", "name", "value", "expected"),
    [
        # an empty DICECAM_HOST served on every interface
        (["serve"], "DICECAM_HOST", "", "expected an address or host name to listen on"),
        (["tracker"], "DICECAM_HOST", " ", "expected an address or host name to listen on"),
        # a space left after the address (an env file's line): not an address to listen on
        (["serve"], "DICECAM_HOST", "127.0.0.1 ", "expected an address or host name to listen on"),
        # a tracker URL without a scheme was taken, and every turn queued for a tracker that
        # could never be reached; dicecam submit named TrackerClient's rule, not the variable
        (["serve"], "DICECAM_TRACKER_URL", "example.com", "starting with http:// or https://"),
        (["submit", "--player", "a", "--score", "50"], "DICECAM_TRACKER_URL", "x.org", "http://"),
        (["serve"], "DICECAM_TRACKER_URL", "http:///tracker", "starting with http:// or https://"),
        # no upload could be taken: every photo answered 413
        (["serve"], "DICECAM_MAX_UPLOAD_MB", "0", "Input should be greater than 0"),
        # an unknown zone was taken unless the admin's name and password were set too
        (["serve"], "DICECAM_TRACKER_ADMIN_TIMEZONE", "Mars/Base", "expected an IANA time zone"),
        # the server's own zone (a link Debian's tzdata lists), which no player may pick
        (["serve"], "DICECAM_TRACKER_ADMIN_TIMEZONE", "localtime", "the server's own zone"),
        # the database URL's own error did not name the variable
        (["serve"], "DICECAM_TRACKER_DATABASE_URL", "mysql://x/y", "expected a database URL"),
        # a folder where a file goes: turns kept in memory only, a calibration never read
        (["serve"], "DICECAM_TURNS_DATABASE", "{folder}", "expected a file"),
        (["serve"], "DICECAM_CALIBRATION", "{folder}", "expected a file"),
        (["serve"], "DICECAM_DATA_DIR", "{file}", "expected a folder"),
        (["outbox", "list"], "DICECAM_DATA_DIR", "{file}", "expected a folder"),
        # the reader's and the table step's settings: serve took them and every photo got 503
        (["serve"], "DICECAM_CONF", "abc", "Input should be a valid number"),
        (["serve"], "DICECAM_IMGSZ", "-5", "Input should be greater than or equal to 32"),
        (["serve"], "DICECAM_BACKEND", "tensorflow", "expected a backend among auto, openvino"),
        (["read", "x.jpg"], "DICECAM_BACKEND", "gpu", "expected a backend among auto, openvino"),
        (["serve"], "DICECAM_TABLE", "maybe", "Input should be a valid boolean"),
        (["serve"], "DICECAM_OFFTABLE_THRESHOLD", "2", "Input should be less than 1"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(
    command, name, value, expected, tmp_path, monkeypatch, capsys, no_server
):
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "file").write_text("not a folder")
    value = value.format(folder=folder, file=tmp_path / "file")
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DICECAM_PORT", "0")
    monkeypatch.setenv(name, value)
    assert main(command) == 2
    line = _one_line(capsys)
    assert f"{name}: " in line and expected in line and repr(value) in line, line


def test_a_size_the_served_model_cannot_take_stops_serve_at_its_start(
    tmp_path, monkeypatch, capsys, no_server
):
    """A --model exported with a fixed 320x320 input and DICECAM_IMGSZ=640 (a size the settings
    take): serve said ok and answered every photo 503."""
    pytest.importorskip("onnx", reason="the onnx package builds the test model")
    from dicecam_testing import onnx_models

    fixed = onnx_models.make_model(
        tmp_path / "fixed.onnx", onnx_models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    )
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DICECAM_PORT", "0")
    monkeypatch.setenv("DICECAM_IMGSZ", "640")
    assert main(["serve", "--model", str(fixed)]) == 2
    line = _one_line(capsys)
    assert "DICECAM_IMGSZ: " in line and "fixed 320x320 input" in line and "imgsz 640" in line
    monkeypatch.setenv("DICECAM_IMGSZ", "320")  # its own size: served
    with pytest.raises(AssertionError, match="started serving"):
        main(["serve", "--model", str(fixed)])


def _taken_port() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


@pytest.mark.parametrize("command", ["serve", "tracker"])
def test_a_port_in_use_or_an_address_not_here_is_one_line(
    command, tmp_path, monkeypatch, capsys, no_server
):
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path))
    with _taken_port() as sock:
        port = sock.getsockname()[1]
        assert main([command, "--port", str(port)]) == 2
    line = _one_line(capsys)
    assert f"cannot listen on 127.0.0.1:{port}" in line and "Address already in use" in line
    assert "DICECAM_PORT" in line
    assert main([command, "--host", "no-such-host.invalid", "--port", "0"]) == 2
    assert "cannot listen on no-such-host.invalid:0" in _one_line(capsys)
    assert main([command, "--host", "192.0.2.1", "--port", "0"]) == 2  # TEST-NET-1: not ours
    assert "cannot listen on 192.0.2.1:0" in _one_line(capsys)


def test_serve_says_a_port_in_use_before_it_starts(tmp_path):
    """The real process: uvicorn logged the bind error after the app had started, and exited 3."""
    with _taken_port() as sock:
        port = sock.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "DICECAM_DATA_DIR": str(tmp_path)},
        )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # nor "serving http://..." first
    assert proc.stderr.strip().splitlines() == [
        f"dicecam serve: error: cannot listen on 127.0.0.1:{port} "
        "(--host/--port or DICECAM_HOST/DICECAM_PORT): Address already in use"
    ]


@pytest.fixture
def read_only_folder(tmp_path) -> Path:
    """A folder nobody can write: a read-only tmpfs as root (chmod stops nothing there), else a
    folder without write permission."""
    folder = tmp_path / f"ro-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)])
    if mounted.returncode != 0:
        pytest.skip("running as root without the right to mount a read-only tmpfs")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


def test_serve_refuses_a_data_dir_it_cannot_write(read_only_folder, monkeypatch, capsys, no_server):
    """It failed with sqlite's traceback at the tracker's start (turns and sheets warned, then
    kept in memory); with --no-tracker it served and lost every turn at a restart."""
    monkeypatch.setenv("DICECAM_PORT", "0")
    for extra in ([], ["--no-tracker"]):
        assert main(["serve", "--data-dir", str(read_only_folder), *extra]) == 2
        line = _one_line(capsys)
        assert (
            f"cannot use the data dir {read_only_folder} (--data-dir or DICECAM_DATA_DIR)" in line
        )
        assert "expected a folder dicecam can write" in line
    assert list(read_only_folder.iterdir()) == []


# -- README's Settings section against the code --------------------------------------------------

SOURCES = [p for pkg in ("vision", "service", "scoring") for p in (REPO / pkg).rglob("*.py")]


def _settings_classes() -> list[type[BaseSettings]]:
    found = []
    for path in SOURCES:
        for name in re.findall(r"^class (\w+)\(BaseSettings\)", path.read_text(), re.M):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            found.append(getattr(importlib.import_module(module), name))
    return found


def _run_time_defaults() -> dict[str, object]:
    """Defaults a settings class leaves as None and the code works out from a constant."""
    from vision.table.edges import EDGE_MIN_CONTRAST
    from vision.table.logic import LEARNED_TOLERANCE, OFF_MIN_DIE_CHECK

    return {
        "DICECAM_SURFACE_TOLERANCE": LEARNED_TOLERANCE,
        "DICECAM_SURFACE_EDGE_CONTRAST": EDGE_MIN_CONTRAST,
        "DICECAM_OFFTABLE_MIN_DIE_CHECK": OFF_MIN_DIE_CHECK,
    }


def _code_defaults() -> dict[str, object]:
    """Every variable the code reads, with its default (None: none, or worked out at run time
    from the model or another setting)."""
    defaults: dict[str, object] = {}
    for cls in _settings_classes():
        prefix = cls.model_config.get("env_prefix", "")
        for field, info in cls.model_fields.items():
            name = f"{prefix}{field}".upper()
            assert defaults.get(name, info.default) == info.default, f"{name}: two defaults"
            defaults[name] = info.default
    for path in SOURCES:  # read without a settings class
        for name in re.findall(r"environ\.get\(\"(DICECAM_\w+)\"", path.read_text()):
            defaults.setdefault(name, None)
    return {**defaults, **_run_time_defaults()}


def _readme_rows() -> dict[str, str]:
    """Each variable README's Settings section names, with the default it gives."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Settings\n") :]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if line.startswith("| `DICECAM_"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            names = re.findall(r"`(\w+)`", cells[0])
            values = _split(cells[1], len(names))
            first = names[0]
            for short, value in zip(names, values, strict=True):
                rows[_expand(first, short)] = value
        else:  # a variable named in a sentence: "`DICECAM_X` (default: ...)"
            for name, value in re.findall(r"`(DICECAM_\w+)` \(default: ([^)]*)\)", line):
                rows[name] = value
    return rows


def _split(cell: str, n: int) -> list[str]:
    """A defaults cell, one per variable: ``127.0.0.1`, `8000``; one text for all otherwise."""
    parts = [p.strip() for p in re.split(r",\s+(?![^(]*\))", cell)]
    return parts if len(parts) == n else [cell] * n


def _expand(first: str, short: str) -> str:
    """``_BELOW`` after ``DICECAM_SECOND_LOOK``: DICECAM_SECOND_LOOK_BELOW; ``_PASSWORD`` after
    ``DICECAM_TRACKER_ADMIN_NAME``: DICECAM_TRACKER_ADMIN_PASSWORD (whichever the code reads)."""
    if not short.startswith("_"):
        return short
    known = _code_defaults()
    for stem in (first, first.rsplit("_", 1)[0]):
        if f"{stem}{short}" in known:
            return f"{stem}{short}"
    return f"{first}{short}"


def _same(readme: str, code: object) -> bool:
    """README's words for a default against the code's value."""
    text = readme.strip("`")
    if code is None:  # none, or worked out at run time: README says from what, not a number
        return readme == "none" or not re.fullmatch(r"[\d.]+|on|off", text)
    if isinstance(code, bool):
        return text == ("on" if code else "off")
    if isinstance(code, (int, float)):
        try:
            return float(text) == float(code)
        except ValueError:
            return False
    if isinstance(code, Path):
        home = Path.home()
        shown = Path(text.replace("~", str(home), 1)) if text.startswith("~") else REPO / text
        return shown == code
    if isinstance(code, tuple):
        return readme == "none" and code == ()
    return text == str(code)


def test_readme_lists_every_variable_the_code_reads():
    readme, code = set(_readme_rows()), set(_code_defaults())
    assert sorted(code - readme) == [], "read by the code, missing from README's Settings"
    assert sorted(readme - code) == [], "in README's Settings, read by no code"


@pytest.mark.parametrize("name", sorted(_code_defaults()))
def test_readme_gives_the_codes_default(name):
    readme = _readme_rows()
    if name not in readme:
        pytest.skip("not in README (test_readme_lists_every_variable_the_code_reads says so)")
    code = _code_defaults()[name]
    assert _same(readme[name], code), f"{name}: README says {readme[name]!r}, the code {code!r}"


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_allowed_hosts_adds_no_name(value, monkeypatch):
    """``DICECAM_ALLOWED_HOSTS=`` (an env file's line left empty) is no name more, as unset:
    not an empty name, refused."""
    from service.settings import Settings

    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", value)
    assert Settings().allowed_hosts == ()
    monkeypatch.setenv("DICECAM_ALLOWED_HOSTS", value + ",dice.example")
    with pytest.raises(ValueError, match="got an empty name"):
        Settings()


def test_a_message_that_names_what_came_does_not_say_it_twice():
    from service.cli import settings_error
    from vision.config import VisionSettings

    with pytest.raises(Exception) as refused:
        VisionSettings(backend="gpu")
    assert settings_error(refused.value) == (
        "DICECAM_BACKEND: expected a backend among auto, openvino, onnxruntime, got 'gpu'"
    )


def test_a_validation_error_of_something_other_than_settings_names_no_variable():
    from pydantic import BaseModel, ValidationError

    from service.cli import settings_error

    class Roll(BaseModel):
        dice: list[int]

    with pytest.raises(ValidationError) as refused:
        Roll(dice="abc")
    assert settings_error(refused.value) is None
