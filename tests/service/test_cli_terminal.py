"""``dicecam`` as a Unix command, run as a real subprocess: pipes closed early, Ctrl-C, what goes
to stdout and stderr, exit statuses, ``--version`` and ``--help``."""

from __future__ import annotations

import importlib
import importlib.metadata
import io
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from service.cli import _reader_options, main
from vision.backends import BACKENDS
from vision.labelling.progress import ProgressBar, progress

from dicecam_testing.cli import DICECAM, ROOT, SAMPLES, dicecam
from dicecam_testing.folders import yolo_folder

progress_module = importlib.import_module("vision.labelling.progress")  # `progress` is its function


def test_version_prints_the_package_version():
    proc = dicecam("--version")
    assert proc.returncode == 0
    assert proc.stdout == f"dicecam {importlib.metadata.version('dicecam')}\n"


def test_no_command_prints_help_and_exits_2():
    proc = dicecam()
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: dicecam")
    assert " read " in proc.stderr and " label " in proc.stderr  # the commands, with help
    assert proc.stderr.splitlines()[-1] == "dicecam: error: expected a COMMAND"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["roll-dice"], "dicecam: error: argument COMMAND: invalid choice: 'roll-dice'"),
        (["read"], "dicecam read: error: the following arguments are required: PHOTO"),
        (["labels", "import", "x.json"], "dicecam labels import: error: the following"),
    ],
    ids=["unknown-command", "missing-argument", "nested-command"],
)
def test_a_usage_error_is_one_line_and_exit_2(args, said):
    proc = dicecam(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(said) and proc.stderr.count("\n") == 1
    assert proc.stderr.endswith(" --help)\n")  # where the usage is


def test_every_help_works_without_loading_the_reader():
    # each subcommand's --help, in one process: then neither the reader's runtimes nor even
    # vision (numpy, OpenCV, pydantic: half a second) have been imported
    code = (
        "import contextlib, io, sys\n"
        "from service.cli import build_parser\n"
        "parser = build_parser()\n"
        "commands = parser._subparsers._group_actions[0].choices\n"
        "for name in commands:\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        try:\n"
        "            parser.parse_args([name, '--help'])\n"
        "        except SystemExit as exc:\n"
        "            assert exc.code == 0, (name, exc.code)\n"
        "    assert out.getvalue().startswith(f'usage: dicecam {name}'), name\n"
        "heavy = ('vision', 'numpy', 'cv2', 'onnxruntime', 'openvino', 'torch', 'fastapi')\n"
        "print(len(commands), sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    count, loaded = proc.stdout.split(" ", 1)
    assert int(count) >= 10 and loaded.strip() == "[]"


def test_the_cli_names_the_backends_vision_has():
    assert _reader_options.BACKENDS == BACKENDS


@pytest.mark.parametrize(
    "args",
    [
        ["read", "--json", "--backend", "onnxruntime", str(SAMPLES[0]), str(SAMPLES[1])],
        ["score", "--json", "--game", "morning-roll", "1", "1", "1", "5", "2", "3"],
        ["strategy", "--game", "morning-roll"],
    ],
    ids=["read", "score", "strategy"],
)
def test_a_closed_pipe_ends_quietly_with_141(args):
    # `dicecam ... | head -1` whose reader has gone before anything is written
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(
            [*DICECAM, *args], stdout=w, stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT
        )
    finally:
        os.close(w)
    assert proc.returncode == 141  # 128 + SIGPIPE, as `yes | head` reports
    assert proc.stderr == ""


def test_read_of_good_and_unreadable_photos(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(SAMPLES[0].read_bytes()[:200])  # a truncated JPEG
    missing = tmp_path / "missing.jpg"
    proc = dicecam(
        "read",
        "--json",
        "--backend",
        "onnxruntime",
        str(SAMPLES[0]),
        str(bad),
        str(missing),
        str(SAMPLES[1]),
    )
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]  # stdout: JSON lines only
    assert [line["image"] for line in lines] == [str(SAMPLES[0]), str(bad), str(missing)] + [
        str(SAMPLES[1])
    ]
    assert lines[0]["values"] and lines[3]["values"]
    assert "error" in lines[1] and "error" in lines[2]
    errors = proc.stderr.splitlines()
    assert len(errors) == 2 and str(bad) in errors[0] and str(missing) in errors[1]
    assert all(line.startswith("dicecam read: ") for line in errors)


def test_eval_and_label_with_an_unreadable_photo_exit_1(tmp_path, capsys):
    # as `dicecam read`: the other photos' work is done and printed, the bad one named on stderr
    dataset = yolo_folder(tmp_path / "set", ["good", "bad"])  # bad.jpg is not a JPEG
    shutil.copy(SAMPLES[0], dataset / "images" / "good.jpg")
    assert main(["eval", str(dataset), "--json", "--backend", "onnxruntime"]) == 1
    out, err = capsys.readouterr()
    figures = json.loads(out)
    assert figures["images"] == 2 and figures["failed_images"] == 1 and figures["matched_dice"]
    assert err.startswith("dicecam eval: ") and "bad.jpg" in err and err.count("\n") == 1
    labelled = tmp_path / "labelled"
    argv = ["label", str(dataset / "images"), "--out", str(labelled), "--no-progress"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "labelled 1 of 2 photos" in out and (labelled / "tasks.json").is_file()
    assert err.startswith("dicecam label: bad.jpg: ") and err.count("\n") == 1


def test_progress_off_a_terminal_logs_a_line_per_tenth():
    stream = io.StringIO()  # not a terminal: a CI log, `2> log.txt`
    for _ in progress(range(5000), total=5000, desc="label", stream=stream):
        pass
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert len(lines) == 11  # 0/5000, then each tenth: not thousands of redraws
    assert lines[0].startswith("label [") and " 5000/5000 " in lines[-1]


def test_progress_off_a_terminal_does_not_use_tqdm(monkeypatch):
    def no_tqdm(*args, **kwargs):
        raise AssertionError("tqdm redraws ten times a second, each a line in a log")

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=no_tqdm))
    stream = io.StringIO()
    assert list(progress(range(3), total=3, desc="label", stream=stream)) == [0, 1, 2]
    assert " 3/3 " in stream.getvalue().splitlines()[-1]


def test_progress_on_a_terminal_redraws_one_line():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = ProgressBar(3, desc="synth", stream=stream)
    for done in (1, 2, 3):
        bar.update(done)
    shown = stream.getvalue()
    assert shown.startswith("\rsynth [") and shown.endswith("\n") and shown.count("\n") == 1
    assert " 3/3 " in shown.rsplit("\r", 1)[-1]


def test_progress_of_a_long_run_off_a_terminal_logs_a_line_a_minute(monkeypatch):
    # 5000 photos at 2 a second, 42 minutes: a line each tenth and each minute (it was one
    # every 2 s, 1250 lines)
    now = [0.0]

    def clock() -> float:
        now[0] += 0.5  # read once an item
        return now[0]

    monkeypatch.setattr(progress_module, "time", types.SimpleNamespace(monotonic=clock))
    stream = io.StringIO()
    for _ in progress(range(5000), total=5000, desc="label", stream=stream):
        pass
    lines = stream.getvalue().splitlines()
    assert 10 + 2500 // 60 <= len(lines) <= 11 + 2500 // 60 + 1
    assert " 5000/5000 " in lines[-1]


def test_synth_progress_in_a_log_is_lines(tmp_path):
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.run(
            [*DICECAM, "synth", "--n", "6", "--size", "96", "96", "--out", str(tmp_path / "s")],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert proc.returncode == 0 and proc.stdout.startswith("wrote 6 images")
    shown = log.read_text()
    assert "\r" not in shown  # nothing redrawn in a file
    lines = shown.splitlines()
    assert 2 <= len(lines) <= 7 and all(line.startswith("synth [") for line in lines)
    assert " 6/6 " in lines[-1]


def _serve_on_a_terminal(tmp_path: Path, **env: str) -> bytes:
    """What `dicecam serve` writes to a terminal until it has started (then Ctrl-C)."""
    main_fd, tty = pty.openpty()
    environ = {**os.environ, "DICECAM_DATA_DIR": str(tmp_path / "data"), "DICECAM_PORT": "0"}
    environ.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [*DICECAM, "serve"],
        stdin=subprocess.DEVNULL,
        stdout=tty,
        stderr=tty,
        cwd=ROOT,
        env={**environ, **env},
        start_new_session=True,
    )
    os.close(tty)
    shown, deadline = b"", time.monotonic() + 60
    try:
        while b"startup complete" not in shown and time.monotonic() < deadline:
            if select.select([main_fd], [], [], 1)[0]:
                shown += os.read(main_fd, 4096)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        os.close(main_fd)
    assert b"startup complete" in shown, shown
    return shown


def test_no_color_turns_the_server_log_colourless(tmp_path):
    assert b"\x1b[" in _serve_on_a_terminal(tmp_path)  # uvicorn colours a terminal's log
    assert b"\x1b[" not in _serve_on_a_terminal(tmp_path, NO_COLOR="1")
