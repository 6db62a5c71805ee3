"""SIGTERM (``kill PID``, systemd, ``docker stop``) and SIGHUP (a closing terminal) stop a
``dicecam`` command as Ctrl-C does: one line on stderr, no half-written output, and exit status
128 + the signal (143, 129). They killed it on the spot, with no word of what was kept."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.cli import STOP_SIGNALS, _stop_signals_interrupt, main

from dicecam_testing.cli import DICECAM, ROOT, SAMPLES, interrupt_when, many_photos
from dicecam_testing.finetune import new_dice, stand_in_training, starting_model

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")


def _start(*args: str, **kwargs) -> subprocess.Popen:
    """``dicecam ARGS`` in a session of its own (as in a terminal), its output piped."""
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.Popen([*DICECAM, *args], text=True, cwd=ROOT, start_new_session=True, **pipes)


def test_sigterm_during_read_exits_143_with_one_line(tmp_path):
    photos = many_photos(tmp_path / "photos", 6)
    proc = _start("read", "--json", "--backend", "onnxruntime", str(photos))
    first: list[str] = []
    started = lambda: first.append(proc.stdout.readline()) or first[0]  # noqa: E731
    out, err = interrupt_when(proc, started, signum=signal.SIGTERM)
    assert proc.returncode == 143
    assert err == "dicecam read: interrupted by SIGTERM\n"
    lines = (first[0] + out).splitlines()
    assert 1 <= len(lines) < 6 * len(SAMPLES)
    assert all(json.loads(line)["image"] for line in lines)  # each line whole


def test_sighup_during_label_leaves_no_output(tmp_path):
    photos = many_photos(tmp_path / "photos", 8)
    out_dir = tmp_path / "labelled"
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = _start(
            "label", str(photos), "--out", str(out_dir), "--format", "yolo", stderr=stderr
        )
        interrupt_when(proc, lambda: "label [" in log.read_text(), signum=signal.SIGHUP)
    assert proc.returncode == 129
    lines = log.read_text().splitlines()
    assert lines[-1] == "dicecam label: interrupted by SIGHUP"
    assert all(line.startswith("label [") for line in lines[:-1])  # no traceback
    assert not out_dir.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "photos",
        "stderr.txt",
    ]  # nor a hidden half-written folder beside it


def test_sigterm_during_synth_leaves_whole_files(tmp_path):
    out_dir = tmp_path / "synth"
    proc = _start("synth", "--n", "200", "--size", "128", "128", "--out", str(out_dir))
    rendered = out_dir / "images" / "train"
    _, err = interrupt_when(
        proc, lambda: rendered.is_dir() and any(rendered.iterdir()), signum=signal.SIGTERM
    )
    assert proc.returncode == 143
    assert err.splitlines()[-1] == "dicecam synth: interrupted by SIGTERM"
    assert "Traceback" not in err
    assert not list(out_dir.rglob("*.tmp"))
    for image in out_dir.glob("images/*/*.jpg"):  # each photo has its labels
        assert (out_dir / "labels" / image.parent.name / f"{image.stem}.txt").is_file()


CHILD = "DICECAM_TESTS_SIGNAL_CHILD"
"""Set in the fresh process :func:`in_a_fresh_process` runs a test in."""


def in_a_fresh_process(test):
    """Run ``test``, which sends stop signals to its own process, in a fresh pytest process:
    in the full suite (``pytest -n 2``) one such test killed its worker after the tests before
    it there (Not properly terminated), and xdist then waited for it for good. Here a signal
    that kills is this test's failure, with the child's output."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        if os.environ.get(CHILD):
            return test(*args, **kwargs)
        node = f"{Path(__file__).relative_to(ROOT)}::{test.__name__}"
        env = {**os.environ, CHILD: "1"}
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        done = subprocess.run(
            [*argv, node], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{node} in a fresh process: {done.returncode}\n{done.stdout}"
        assert "\n1 passed" in done.stdout, done.stdout

    return run


@pytest.fixture
def uncaught() -> Iterator[list[int]]:
    """The stop signals that reached the test's own handler: one that dicecam left uncaught
    fails the test instead of killing the test run."""
    caught: list[int] = []
    before = {s: signal.signal(s, lambda s, frame: caught.append(s)) for s in STOP_SIGNALS}
    yield caught
    for signum, handler in before.items():
        signal.signal(signum, handler)


@in_a_fresh_process
def test_sigterm_during_train_says_out_was_left_as_it_was(tmp_path, monkeypatch, capsys, uncaught):
    """A real SIGTERM to this process while the face classifier trains (stood in for)."""
    pytest.importorskip("ultralytics")
    calls = stand_in_training(monkeypatch)
    calls["signal"] = signal.SIGTERM
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine-ft.onnx").write_bytes(b"earlier")
    argv = ["train", "--from", str(starting_model(tmp_path / "base")), "--data"]
    argv += [str(new_dice(tmp_path / "data")), "--out", str(out), "--detector", "keep"]
    argv += ["--replay", "0", "--work", str(tmp_path / "work")]
    before = signal.getsignal(signal.SIGTERM)
    assert main(argv) == 143
    assert capsys.readouterr().err == (
        f"dicecam train: interrupted by SIGTERM: {out} left as it was (no model of this run "
        "there); the same command starts again\n"
    )
    assert [p.name for p in out.iterdir()] == ["mine-ft.onnx"]
    assert (out / "mine-ft.onnx").read_bytes() == b"earlier"
    assert signal.getsignal(signal.SIGTERM) is before  # given back after the command
    assert uncaught == []


@in_a_fresh_process
def test_a_second_stop_signal_waits_for_the_cleanup_of_the_first(uncaught):
    """systemd or a closing terminal may send more than one: the second stopped the cleanup."""
    received: list[int] = []
    cleaned = False
    with pytest.raises(KeyboardInterrupt), _stop_signals_interrupt(received):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # interrupted at once
        finally:
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
            cleaned = True
    assert cleaned and received == [signal.SIGTERM] and uncaught == []


def test_main_off_the_main_thread_leaves_signals_alone(capsys):
    """Signal handlers can only be set on the main thread: main called from another one (an
    embedding program, a test) ran into ValueError."""
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(["score", "1", "1", "1", "5"])))
    thread.start()
    thread.join(30)
    assert codes == [0], capsys.readouterr().err
    assert "1000" in capsys.readouterr().out
