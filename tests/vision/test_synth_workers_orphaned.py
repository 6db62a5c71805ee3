"""``dicecam synth --workers N`` killed with SIGKILL: its worker processes stop with it. Before,
they went on rendering and writing the images already handed to them (12 written where the
kill came at 4), then waited for work forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dicecam_testing.cli import ROOT

ORPHAN = """
import os, sys
from pathlib import Path
from vision.synth import dataset
out = Path(sys.argv[1])
dataset._follow_parent(int(sys.argv[2]))
dataset._write_one((out, 3, 0, 0.0, 96, 96, {}))
"""


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _images(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.glob("images/*/*.jpg"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the workers in /proc")
def test_the_workers_of_a_killed_synth_run_write_nothing_more(tmp_path: Path):
    out = tmp_path / "out"
    args = ["synth", "--n", "40", "--size", "320", "320", "--seed", "3", "--quiet"]
    run = subprocess.Popen(
        [sys.executable, "-m", "service.cli", *args, "--workers", "2", "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not _images(out):  # each worker is part way through its first 4 images
            assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
            assert time.monotonic() < deadline, "no image after 60 s"
            time.sleep(0.01)
        workers = _children(run.pid)
        assert len(workers) >= 2
        run.kill()
        run.wait(timeout=10)
        written = _images(out)
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [w for w in workers if _alive(w)] == []
        time.sleep(0.5)
        assert _images(out) == written
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=10)
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_where_there_is_no_prctl_a_worker_follows_its_parent_by_its_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str
):
    """macOS and Windows have no ``PR_SET_PDEATHSIG``: the initializer asks no C library for
    it there, and a worker whose parent is the run that started it writes its images."""
    from vision.synth import dataset

    asked: list[object] = []
    monkeypatch.setattr(dataset.sys, "platform", platform)
    monkeypatch.setattr(dataset.ctypes, "CDLL", lambda *a, **k: asked.append(a))
    monkeypatch.setattr(dataset, "_PARENT", None)
    dataset._follow_parent(os.getppid())
    assert (dataset._PARENT, asked) == (os.getppid(), [])
    for kind in ("images", "labels", "meta"):
        (tmp_path / kind / "train").mkdir(parents=True)
    assert dataset._write_one((tmp_path, 3, 0, 0.0, 96, 96, {}))["split_train"] == 1
    assert (tmp_path / "images" / "train" / "synth_s3_000000.jpg").is_file()


def test_a_worker_whose_parent_is_gone_before_it_starts_writes_nothing(tmp_path: Path):
    """Its parent's id no longer its parent's (macOS, where the orphan goes to launchd; Linux,
    where the run died before ``prctl`` was asked): the worker ends before its first image."""
    for kind in ("images", "labels", "meta"):
        (tmp_path / kind / "train").mkdir(parents=True)
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait(timeout=60)
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN, str(tmp_path), str(gone.pid)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (1, "")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
