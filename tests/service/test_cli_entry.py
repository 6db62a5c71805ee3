import errno
import subprocess
import sys

import pytest

from service.cli import build_parser, main


def test_help_lists_subcommands_and_exits_zero(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "dicecam" in out


def test_unknown_subcommand_exits_2():
    proc = subprocess.run(
        [sys.executable, "-m", "service.cli", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def test_parser_builds():
    assert build_parser().prog == "dicecam"


def test_closed_output_pipe_stops_quietly():
    # `dicecam advise ... | head -1`: the reader goes away before dicecam has written everything
    code = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r)\n"
        "sys.stdout = os.fdopen(w, 'w', buffering=1)\n"
        "from service.cli import main\n"
        "sys.exit(main(['advise', '--game', 'morning-roll', '1', '5', '2', '3', '4', '6']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 141  # 128 + SIGPIPE, as a shell reports `yes | head`
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_every_port_0_to_65535_is_taken_and_no_other():
    from service.cli import UsageError, check_port

    assert [check_port(p) for p in (None, 0, 1, 65535)] == [None, 0, 1, 65535]
    for port in (-1, 65536):
        with pytest.raises(UsageError, match=f"--port must be 0 to 65535, got {port}"):
            check_port(port)


@pytest.mark.parametrize(("value", "colors"), [(None, None), ("", None), ("1", False)])
def test_no_color_set_and_not_empty_turns_colours_off(monkeypatch, value, colors):
    from service.cli import use_colors

    monkeypatch.delenv("NO_COLOR", raising=False)
    if value is not None:
        monkeypatch.setenv("NO_COLOR", value)
    assert use_colors() is colors


def test_dicecam_alone_shows_the_commands_and_is_a_usage_error(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "score" in err and "read" in err
    assert err.endswith("\ndicecam: error: expected a COMMAND\n")


def _score_raising(monkeypatch, exc: BaseException) -> None:
    """``dicecam score`` raises ``exc`` once its arguments are parsed."""
    import service.cli.scoring_cmds as scoring_cmds

    def run_score(args):
        raise exc

    monkeypatch.setattr(scoring_cmds, "run_score", run_score)


def test_a_full_disk_is_one_line_naming_the_file_and_status_1(monkeypatch, capsys):
    _score_raising(monkeypatch, OSError(errno.ENOSPC, "No space left on device", "out/a.json"))
    assert main(["score", "1"]) == 1
    assert capsys.readouterr().err == "dicecam score: error: No space left on device: out/a.json\n"


def test_an_oserror_not_of_the_disk_is_not_hidden_as_one(monkeypatch):
    _score_raising(monkeypatch, ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    with pytest.raises(ConnectionRefusedError):
        main(["score", "1"])
