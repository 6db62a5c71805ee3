"""``dicecam label`` / ``labels convert`` / ``labels import`` into a folder that holds earlier
labels (``--overwrite``): a run killed halfway, or one that fills the disk, keeps every earlier
file whole, and the second says so in one line.

The child runs under a file-size limit (``RLIMIT_FSIZE``): crossing it kills it on the spot
(``SIGXFSZ``), or fails the write with ``EFBIG`` as a full disk would; both work as root.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from service.cli import main
from vision.labelling import LabelledPhoto, write_labels
from vision.types import Die

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE and SIGXFSZ are POSIX")


@pytest.fixture
def labelled(tmp_path: Path) -> tuple[Path, Path]:
    """COCO labels of 150 photos, and their Label Studio conversion (the earlier output)."""
    photos = [
        LabelledPhoto(f"roll{i}.jpg", 640, 480, [Die(1 + i % 6, (10.0, 20.0, 60.0, 70.0), 0.9)])
        for i in range(150)
    ]
    src = tmp_path / "coco"
    write_labels(photos, src, "coco", images="none")
    out = tmp_path / "studio"
    assert main(["labels", "convert", str(src), "--to", "labelstudio", "--out", str(out)]) == 0
    return src, out


def _convert_again(src: Path, out: Path, *, kill: bool) -> subprocess.CompletedProcess:
    code = f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.{"SIG_DFL" if kill else "SIG_IGN"})
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        from service.cli import main
        sys.exit(main(["labels", "convert", {str(src)!r}, "--to", "labelstudio", "--out",
                       {str(out)!r}, "--overwrite", "--model-version", "second-run"]))
    """
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_run_killed_while_writing_keeps_the_earlier_tasks(labelled: tuple[Path, Path]):
    src, out = labelled
    before = (out / "tasks.json").read_text()
    assert len(before) > 4096
    done = _convert_again(src, out, kill=True)
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert (out / "tasks.json").read_text() == before
    assert len(json.loads(before)) == 150


def test_a_full_disk_is_one_line_and_keeps_the_earlier_tasks(labelled: tuple[Path, Path]):
    src, out = labelled
    before = (out / "tasks.json").read_text()
    done = _convert_again(src, out, kill=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("dicecam labels convert: error: File too large: ")
    assert done.stderr.strip().endswith(str(out / "tasks.json"))
    assert (out / "tasks.json").read_text() == before
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
