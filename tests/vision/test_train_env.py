"""prepare_ultralytics: the environment it sets up for training, and what it leaves behind."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = (
    "import os\n"
    "from vision.train.env import prepare_ultralytics\n"
    "prepare_ultralytics(threads=1)\n"
    "cfg = os.environ['YOLO_CONFIG_DIR']\n"
    "print(cfg, os.path.isfile(os.path.join(cfg, 'Arial.ttf')))\n"
    "print(os.path.isfile(os.path.join(cfg, 'Arial.Unicode.ttf')), os.environ['YOLO_OFFLINE'])\n"
)


def _run(env: dict[str, str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


@pytest.mark.skipif(
    importlib.util.find_spec("ultralytics") is None, reason="the train extra (ultralytics)"
)
def test_its_private_config_folder_goes_with_the_process_and_a_given_one_stays(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "YOLO_CONFIG_DIR"}
    env.pop("YOLO_OFFLINE", None)
    cfg, had_font, had_unicode, offline = _run(env)
    assert Path(cfg).name.startswith("dicecam-yolo-") and had_font == "True"  # used, then
    assert not Path(cfg).exists()  # removed at exit
    # ultralytics fetches Arial.Unicode.ttf for labels past ASCII, and checks online unless told
    assert had_unicode == "True" and offline == "1"
    given = tmp_path / "yolo"
    cfg, had_font, had_unicode, _ = _run({**env, "YOLO_CONFIG_DIR": str(given)})
    assert Path(cfg) == given and had_font == "True" and had_unicode == "True"
    assert (given / "Arial.ttf").is_file()  # the caller's folder is the caller's to remove


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_a_bad_train_threads_variable_stops_dicecam_train_at_once_naming_it(
    value, monkeypatch, capsys
):
    """DICECAM_TRAIN_THREADS was read with a bare int() when training began: a traceback after
    the data was prepared (or, for 0, every core silently)."""
    from service.cli import main
    from vision.train.env import train_threads

    monkeypatch.setenv("DICECAM_TRAIN_THREADS", value)
    assert main(["train", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert f"DICECAM_TRAIN_THREADS must be a whole number from 1 up, got '{value}'" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("DICECAM_TRAIN_THREADS", " 3 ")
    assert train_threads() == 3
    monkeypatch.delenv("DICECAM_TRAIN_THREADS")
    assert train_threads() == (os.cpu_count() or 1)
