"""The vision-side commands killed with SIGKILL part way (as a power cut stops them): run as real
``dicecam`` subprocesses, killed at the Nth file they put in place (``os.replace``, through a
``sitecustomize`` on ``PYTHONPATH``), then checked: no file half-written, earlier results whole,
and the same command run again gives what an uninterrupted run gives."""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dicecam_testing.cli import ROOT, SAMPLES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

KILLER = '''
"""SIGKILL this process just before its KILL_AT_REPLACE-th os.replace (counted from 1)."""
import os
import signal

if os.environ.get("KILL_AT_REPLACE"):
    _at = int(os.environ["KILL_AT_REPLACE"])
    _replace, _count = os.replace, [0]

    def _killing_replace(src, dst, *args, **kwargs):
        _count[0] += 1
        if _count[0] == _at:
            os.kill(os.getpid(), signal.SIGKILL)
        return _replace(src, dst, *args, **kwargs)

    os.replace = _killing_replace
'''


def _dicecam(tmp: Path, *args: str, kill_at: int | None = None) -> subprocess.CompletedProcess:
    """``dicecam ARGS`` in a subprocess, SIGKILLed before its ``kill_at``-th replace."""
    hook = tmp / "killer"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(textwrap.dedent(KILLER))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    env.pop("KILL_AT_REPLACE", None)
    if kill_at is not None:
        env["KILL_AT_REPLACE"] = str(kill_at)
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
        env=env,
    )


def _files(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) and its SHA-256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    folder = tmp_path / "photos"
    folder.mkdir()
    for photo in SAMPLES:
        (folder / photo.name).write_bytes(photo.read_bytes())
    return folder


@pytest.mark.parametrize(("fmt", "kill_at"), [("yolo", 1), ("yolo", 4), ("coco", 3)])
def test_a_killed_label_overwrite_keeps_every_photo_its_earlier_labels_name(
    photos: Path, tmp_path: Path, fmt: str, kill_at: int
):
    """``--overwrite`` over an earlier labelled folder, killed while it places the photos: the
    earlier labels (coco.json, train.txt, labels/*.txt) still find each photo they name. Before,
    a photo was removed before its new copy was made, so a kill there lost it."""
    out = tmp_path / "labelled"
    args = ["label", str(photos), "--out", str(out), "--format", fmt, "--no-progress"]
    assert _dicecam(tmp_path, *args).returncode == 0
    earlier = _files(out)
    killed = _dicecam(tmp_path, *args, "--overwrite", kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _files(out)
    photos_named = [n for n in earlier if n.endswith(".jpg")]
    assert [n for n in photos_named if n not in left] == []  # every photo still there
    for name in photos_named:  # and whole: the same bytes as before (the same photo)
        assert left[name] == earlier[name], name
    if fmt == "coco":
        listed = json.loads((out / "annotations" / "instances_default.json").read_text())["images"]
        assert all((out / "images" / i["file_name"]).is_file() for i in listed)
    assert _dicecam(tmp_path, *args, "--overwrite").returncode == 0
    again = {n: h for n, h in _files(out).items() if not n.endswith(".tmp")}
    assert {n: h for n, h in again.items() if n != "summary.json"} == {
        n: h for n, h in earlier.items() if n != "summary.json"
    }


def test_a_killed_label_run_leaves_no_staging_folder_once_run_again(photos: Path, tmp_path: Path):
    """A new --out is written in a hidden staging folder beside it; a killed run's (a copy of
    every photo, for yolo) is removed by the next run, not left to fill the disk."""
    out = tmp_path / "labelled"
    args = ["label", str(photos), "--out", str(out), "--format", "yolo", "--no-progress"]
    killed = _dicecam(tmp_path, *args, kill_at=6)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists()  # nothing half-made at --out
    assert [p.name for p in tmp_path.glob(".labelled.*.partial")] != []  # what it left
    done = _dicecam(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killer", "labelled", "photos"]
    assert filecmp.cmp(out / "images" / "train" / SAMPLES[0].name, SAMPLES[0], shallow=False)
