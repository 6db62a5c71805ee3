import subprocess
import sys

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
