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
