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

import service.cli
from service.cli import _reader_options, main
from vision.backends import BACKENDS
from vision.labelling.progress import ProgressBar, progress

from dicecam_testing.folders import yolo_folder

progress_module = importlib.import_module("vision.labelling.progress")  # `progress` is its function
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))
DICECAM = [sys.executable, "-m", "service.cli"]


def dicecam(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DICECAM, *args], capture_output=True, text=True, timeout=60, cwd=ROOT, **kwargs
    )


def many_photos(folder: Path, copies: int) -> Path:
    """``copies`` times each sample photo, in ``folder``."""
    folder.mkdir()
    for k in range(copies):
        for photo in SAMPLES:
            shutil.copy(photo, folder / f"{k:02d}-{photo.name}")
    return folder


def interrupt_when(proc: subprocess.Popen, started, timeout: float = 30.0) -> tuple[str, str]:
    """Ctrl-C ``proc`` (SIGINT to its process group, as a terminal does) once ``started()``
    holds; its stdout and stderr."""
    deadline = time.monotonic() + timeout
    while not started():
        assert proc.poll() is None, f"ended before it was interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "never started working"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=30)


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


def test_ctrl_c_during_read_exits_130_with_one_line(tmp_path):
    photos = many_photos(tmp_path / "photos", 6)
    proc = subprocess.Popen(
        [*DICECAM, "read", "--json", "--backend", "onnxruntime", str(photos)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    first: list[str] = []
    out, err = interrupt_when(proc, lambda: first.append(proc.stdout.readline()) or first[0])
    assert proc.returncode == 130
    assert err == "dicecam read: interrupted\n"
    lines = (first[0] + out).splitlines()
    assert 1 <= len(lines) < 6 * len(SAMPLES)
    assert all(json.loads(line)["image"] for line in lines)  # each line whole


def test_ctrl_c_during_label_leaves_no_output(tmp_path):
    photos = many_photos(tmp_path / "photos", 8)
    out_dir = tmp_path / "labelled"
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [*DICECAM, "label", str(photos), "--out", str(out_dir), "--format", "yolo"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=ROOT,
            start_new_session=True,
        )
        # the progress bar's first line: the reader is loaded, reading has begun
        interrupt_when(proc, lambda: "label [" in log.read_text())
    assert proc.returncode == 130
    lines = log.read_text().splitlines()
    assert lines[-1] == "dicecam label: interrupted"
    assert all(line.startswith("label [") for line in lines[:-1])  # no traceback
    assert not out_dir.exists()  # labels are written once every photo is read


@pytest.mark.parametrize("out_exists", [False, True], ids=["new-out", "empty-out"])
def test_ctrl_c_while_label_writes_leaves_out_as_it_was(tmp_path, monkeypatch, capsys, out_exists):
    # stopped after the labels (and the copied photos) were written, before the review list
    import vision.labelling.batch as batch

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "write_review", interrupted)
    photos = tmp_path / "photos"
    photos.mkdir()
    for photo in SAMPLES[:2]:
        shutil.copy(photo, photos)
    out_dir = tmp_path / "labelled"
    if out_exists:
        out_dir.mkdir()
    argv = ["label", str(photos), "--out", str(out_dir), "--format", "yolo", "--no-progress"]
    assert main(argv) == 130
    assert capsys.readouterr().err == "dicecam label: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["photos", "labelled"] if out_exists else ["photos"]
    )  # no half-written folder, nor a hidden one beside it
    assert not out_exists or not any(out_dir.iterdir())
    monkeypatch.undo()  # the same command runs again, whole
    assert main(argv) == 0
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["labelled"] == 2 and summary["outputs"]["labels"] == str(out_dir / "data.yaml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labelled", "photos"]


def test_ctrl_c_while_labels_convert_writes_leaves_no_out(tmp_path, monkeypatch, capsys):
    import vision.labelling.batch as batch

    source = yolo_folder(tmp_path / "set", ["a", "b"])
    for name, photo in zip("ab", SAMPLES, strict=False):
        shutil.copy(photo, source / "images" / f"{name}.jpg")
    real_write_coco = batch.write_coco

    def write_then_stop(photos, out, **kwargs):
        real_write_coco(photos, out, **kwargs)  # the photos copied, the annotations written
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "write_coco", write_then_stop)
    out_dir = tmp_path / "coco"
    argv = ["labels", "convert", str(source), "--to", "coco", "--out", str(out_dir)]
    assert main(argv) == 130
    assert capsys.readouterr().err == "dicecam labels: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]
    monkeypatch.undo()
    assert main(argv) == 0
    assert (out_dir / "annotations" / "instances_default.json").is_file()
    assert f"-> {out_dir / 'annotations' / 'instances_default.json'}" in capsys.readouterr().out


def test_ctrl_c_during_synth_leaves_whole_files(tmp_path):
    out_dir = tmp_path / "synth"
    proc = subprocess.Popen(
        [*DICECAM, "synth", "--n", "200", "--size", "128", "128", "--out", str(out_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    rendered = out_dir / "images" / "train"
    _, err = interrupt_when(proc, lambda: rendered.is_dir() and any(rendered.iterdir()))
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "dicecam synth: interrupted" and "Traceback" not in err
    assert not list(out_dir.rglob("*.tmp"))
    for image in out_dir.glob("images/*/*.jpg"):  # each photo has its labels
        assert (out_dir / "labels" / image.parent.name / f"{image.stem}.txt").is_file()


def test_ctrl_c_while_starting_up_is_one_line(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(service.cli, "build_parser", interrupted)
    assert main(["read", "x.jpg"]) == 130
    assert capsys.readouterr().err == "dicecam: interrupted\n"


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
