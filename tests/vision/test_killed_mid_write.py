"""The vision-side commands killed with SIGKILL part way (as a power cut stops them): run as real
``dicecam`` subprocesses, killed at the Nth file they put in place (``os.replace``, through a
``sitecustomize`` on ``PYTHONPATH``), then checked: no file half-written, earlier results whole,
and the same command run again gives what an uninterrupted run gives."""

from __future__ import annotations

import errno
import filecmp
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dicecam_testing.cli import ROOT, SAMPLES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

KILLER = '''
"""SIGKILL this process just before its KILL_AT_REPLACE-th os.replace (counted from 1), or
before the first that puts a file named KILL_BEFORE in place."""
import os
import signal

if os.environ.get("KILL_AT_REPLACE"):
    _at, _name = os.environ["KILL_AT_REPLACE"], os.environ.get("KILL_BEFORE")
    _replace, _count = os.replace, [0]

    def _killing_replace(src, dst, *args, **kwargs):
        _count[0] += 1
        if _count[0] == int(_at) or os.path.basename(dst) == _name:
            os.kill(os.getpid(), signal.SIGKILL)
        return _replace(src, dst, *args, **kwargs)

    os.replace = _killing_replace
'''


def _dicecam(
    tmp: Path, *args: str, kill_at: int | None = None, kill_before: str | None = None
) -> subprocess.CompletedProcess:
    """``dicecam ARGS`` in a subprocess, SIGKILLed before its ``kill_at``-th replace, or before
    it puts a file named ``kill_before`` in place."""
    return _python(tmp, "-m", "service.cli", *args, kill_at=kill_at, kill_before=kill_before)


def _python(
    tmp: Path, *args: str, kill_at: int | None = None, kill_before: str | None = None
) -> subprocess.CompletedProcess:
    """``python ARGS`` in a subprocess in ``tmp``, SIGKILLed before its ``kill_at``-th replace,
    or before it puts a file named ``kill_before`` in place."""
    hook = tmp / "killer"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(textwrap.dedent(KILLER))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    env.pop("KILL_AT_REPLACE", None)
    env.pop("KILL_BEFORE", None)
    if kill_at is not None or kill_before is not None:
        env["KILL_AT_REPLACE"] = str(kill_at or 0)
    if kill_before is not None:
        env["KILL_BEFORE"] = kill_before
    return subprocess.run(
        [sys.executable, *args],
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


@pytest.fixture(scope="module")
def labelled_at_conf_09(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``labelled``: a whole ``dicecam label --conf 0.9`` of the photos, made once for the
    tests that start from it (each works on a copy)."""
    tmp = tmp_path_factory.mktemp("conf-0.9")
    photos = tmp / "photos"
    photos.mkdir()
    for photo in SAMPLES:
        (photos / photo.name).write_bytes(photo.read_bytes())
    args = ["label", str(photos), "--out", str(tmp / "labelled"), "--format", "yolo"]
    made = _dicecam(tmp, *args, "--no-progress", "--conf", "0.9")
    assert made.returncode == 0, made.stderr
    return tmp / "labelled"


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
    every photo, for yolo) is removed by the next run, not left to fill the disk, and the next
    run says so (before, it removed it without a word: nothing told the user that the earlier
    run had been cut short and that this one labels every photo again)."""
    out = tmp_path / "labelled"
    args = ["label", str(photos), "--out", str(out), "--format", "yolo", "--no-progress"]
    killed = _dicecam(tmp_path, *args, kill_at=6)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists()  # nothing half-made at --out
    left = list(tmp_path.glob(".labelled.*.partial"))  # what it left: .labelled.PID.partial
    assert len(left) == 1, left
    pid = int(left[0].name.split(".")[2])
    done = _dicecam(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"dicecam label: removed {left[0]}, the unfinished output of an earlier run (process "
        f"{pid}) stopped before it was done; none of it had reached --out {out}: this "
        "run writes it all\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killer", "labelled", "photos"]
    assert filecmp.cmp(out / "images" / "train" / SAMPLES[0].name, SAMPLES[0], shallow=False)


@pytest.mark.parametrize("kill_before", ["roll-s21-016.txt", "review.csv", "summary.json"])
def test_a_killed_label_overwrite_leaves_no_review_list_of_other_labels_and_says_so(
    photos: Path, tmp_path: Path, kill_before: str, labelled_at_conf_09: Path
):
    """``--overwrite`` writes into --out in place: killed among the labels, or after them but
    before the review list or the summary, it left the earlier run's review.csv, review.json
    and summary.json beside labels of its own (another --conf: other dice), and neither that
    folder nor the next run said a word. Now the earlier run's review list and summary go
    before the first label is written, an unfinished.txt in --out says what happened until a
    run is done, and the next run says it writes it all again."""
    out = tmp_path / "labelled"
    args = ["label", str(photos), "--out", str(out), "--format", "yolo", "--no-progress"]
    shutil.copytree(labelled_at_conf_09, out)  # labelled with --conf 0.9
    killed = _dicecam(tmp_path, *args, "--overwrite", kill_before=kill_before)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    note = (out / "unfinished.txt").read_text()
    assert note.startswith("dicecam label was writing this folder (process "), note
    assert "Run the same command again (with --overwrite) to write them all" in note
    records = [n for n in ("review.csv", "review.json", "summary.json") if (out / n).exists()]
    assert records == (["review.csv", "review.json"] if kill_before == "summary.json" else [])
    if records:  # this run's: a row for each die of its labels
        dice = sum(len(f.read_text().splitlines()) for f in out.glob("labels/train/*.txt"))
        rows = json.loads((out / "review.json").read_text())
        assert len([r for r in rows if r["die"] >= 0]) == dice
    done = _dicecam(tmp_path, *args, "--overwrite")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"dicecam label: --out {out} holds the output of an earlier run stopped before it was "
        "done (unfinished.txt in it): this run writes it all again\n"
    )
    assert not (out / "unfinished.txt").exists()
    summary = json.loads((out / "summary.json").read_text())
    rows = json.loads((out / "review.json").read_text())
    assert summary["dice"] == len([r for r in rows if r["die"] >= 0]) > 0


@pytest.mark.parametrize("killed", [True, False], ids=["killed", "file-too-big"])
def test_a_calibrate_stopped_writing_its_preview_keeps_the_earlier_one(
    tmp_path: Path, killed: bool
):
    """The preview PNG is written whole or not at all: killed part way by a file-size limit
    (SIGXFSZ), or failing there as on a full disk (EFBIG: one line naming the file), the earlier
    preview and the stored calibration are as they were. Before, cv2.imwrite wrote the preview
    in place: a failed write removed the earlier one and said "expected a .png or .jpg path"."""
    from PIL import Image

    cal, preview = tmp_path / "calibration.json", tmp_path / "preview.png"
    args = [str(SAMPLES[0]), "--points", "10,10", "600,20", "300,400", "--out", str(cal)]
    assert _dicecam(tmp_path, "calibrate", *args, "--show", str(preview)).returncode == 0
    earlier = (cal.read_bytes(), preview.read_bytes())
    code = (
        "import resource, runpy, signal, sys; "
        f"signal.signal(signal.SIGXFSZ, signal.{'SIG_DFL' if killed else 'SIG_IGN'}); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (32768, 32768)); "
        f"sys.argv = ['dicecam', 'calibrate', *{args!r}, '--show', {str(preview)!r}]; "
        "runpy.run_module('service.cli', run_name='__main__')"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    if killed:
        assert done.returncode == -signal.SIGXFSZ, done.stderr
    else:
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines()[-1] == (
            f"dicecam calibrate: error: cannot write the preview {preview}: "
            f"[Errno {errno.EFBIG}] {os.strerror(errno.EFBIG)}: {str(preview)!r}"
        )
    assert (cal.read_bytes(), preview.read_bytes()) == earlier
    with Image.open(preview) as im:
        im.load()  # whole
    if not killed:  # a killed one cannot clean up: its hidden .preview.png.*.tmp stays
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(("kill_at", "held"), [(2, 0), (8, 2)])  # data.yaml, then 3 an image
def test_a_killed_synth_run_again_writes_the_same_set(tmp_path: Path, kill_at: int, held: int):
    """Killed part way, ``dicecam synth`` leaves each photo whole beside its labels; the same
    command writes the set an uninterrupted run writes, byte for byte (its hidden temporaries
    of the killed run aside), and says how many of the images asked were there already and
    that it writes them again (before, not a word: a rerun neither resumed nor said so)."""
    args = ["synth", "--n", "5", "--size", "96", "96", "--seed", "3", "--quiet"]
    args += ["--val-fraction", "0.4"]
    assert _dicecam(tmp_path, *args, "--out", "whole").returncode == 0
    killed = _dicecam(tmp_path, *args, "--out", "cut", kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    cut = tmp_path / "cut"
    for photo in cut.glob("images/*/*.jpg"):
        assert (cut / "labels" / photo.parent.name / f"{photo.stem}.txt").is_file()
    done = _dicecam(tmp_path, *args, "--out", "cut")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"dicecam synth: cut already holds {held} of the 5 images asked (seed 3, images 0 to 4; "
        "a run stopped part way?): writing all 5 again, the same images for the same options\n"
        if held
        else ""
    )
    again = {n: h for n, h in _files(cut).items() if not Path(n).name.startswith(".")}
    assert again == _files(tmp_path / "whole")


def test_the_temporary_file_a_killed_writer_left_goes_with_the_next_write_there(tmp_path: Path):
    """Killed before it put a file in place, ``dicecam synth`` left its hidden temporary (a
    whole photo or label) beside it; nothing read it, and nothing removed it. The next run
    writing into that folder now removes it: its name holds the process id of a writer that
    no longer runs."""
    args = ["synth", "--n", "3", "--size", "96", "96", "--seed", "3", "--quiet", "--out", "cut"]
    killed = _dicecam(tmp_path, *args, kill_at=3)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    cut = tmp_path / "cut"
    assert len(list(cut.rglob(".*.tmp"))) == 1  # what it left
    assert _dicecam(tmp_path, *args).returncode == 0
    assert list(cut.rglob(".*.tmp")) == []


def test_only_the_temporary_files_of_writers_no_longer_running_here_are_removed(tmp_path: Path):
    """Those of a running process (this one, another), of another machine sharing the folder,
    and hidden files of other makers stay; the first write of a process into the folder
    removes the others."""
    from vision.atomic import atomic_write, remove_dead_temporaries, replacing

    with replacing(tmp_path / "card.md") as part:  # the name a writer gives its temporary
        _, _, writer, rest, _ = part.name.rsplit(".", 4)
        part.write_text("# card")
    pid, machine = writer.split("-")
    assert int(pid) == os.getpid()
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait(timeout=60)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    other = f"{int(machine, 16) ^ 1:08x}"
    names = {
        f".model.onnx.{ended.pid}-{machine}.{rest}.tmp": False,  # killed
        f".model.onnx.{running.pid}-{machine}.{rest}.tmp": True,  # writing still
        f".model.onnx.{os.getpid()}-{machine}.{rest}.tmp": True,  # this process's
        f".model.onnx.{ended.pid}-{other}.{rest}.tmp": True,  # another machine's process
        f".model.onnx.{rest}.tmp": True,  # no writer named
        ".notes.txt": True,
    }
    folder = tmp_path / "models"
    folder.mkdir()
    try:
        for name in names:
            (folder / name).write_bytes(b"half a model")
        atomic_write(folder / "model.md", "# model")
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["model.md", *(n for n, stays in names.items() if stays)]
        )
        running.kill()
        running.wait(timeout=60)
        assert remove_dead_temporaries(folder) == [
            folder / f".model.onnx.{running.pid}-{machine}.{rest}.tmp"
        ]
    finally:
        running.kill()


def test_a_photo_link_a_killed_label_run_left_is_removed_as_its_temporary_files_are(
    tmp_path: Path, monkeypatch
):
    """dicecam label --images link links a photo at a hidden name, then puts it in place: a
    run killed between left ``.NAME.PID.link.tmp``, which nothing removed. The link is named as
    the temporary files of ``replacing`` now, and a gone writer's link (hard or symbolic) is
    removed as they are; the photo it links stays."""
    import vision.labelling.model as model
    from vision.atomic import TEMPORARY, remove_dead_temporaries, replace_file, writer

    photo, images = tmp_path / "photo.jpg", tmp_path / "images"
    photo.write_bytes(b"a photo")
    images.mkdir()
    named: list[str] = []

    def replace(src, dst) -> None:
        named.append(Path(src).name)
        replace_file(src, dst)

    monkeypatch.setattr(model, "replace_file", replace)
    model.place_image(photo, images / "a.jpg", "link")
    assert (images / "a.jpg").read_bytes() == b"a photo"
    found = TEMPORARY.fullmatch(named[0])
    assert found is not None, named
    assert f"{found['pid']}-{found['machine']}" == writer()
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait(timeout=60)
    hard = images / f".b.jpg.{ended.pid}-{found['machine']}.abcd1234.tmp"
    os.link(photo, hard)
    soft = images / f".c.jpg.{ended.pid}-{found['machine']}.abcd1234.tmp"
    soft.symlink_to(photo)
    assert sorted(remove_dead_temporaries(images)) == [hard, soft]
    assert sorted(p.name for p in images.iterdir()) == ["a.jpg"]
    assert photo.read_bytes() == b"a photo"


EARLIER = {"m.onnx": b"earlier", "m-faces.onnx": b"earlier", "m-verify.onnx": b"earlier"}
NEW = {"m.onnx": b"new", "m-faces.onnx": b"new", "m-faces.pt": b"new", "m.md": b"new"}


@pytest.mark.parametrize("kill_at", [2, 5, 7, 8])  # into the hidden folder; then into --out
def test_a_model_publish_killed_leaves_the_earlier_model_or_none_the_reader_loads(
    tmp_path: Path, kill_at: int
):
    """``dicecam train``'s last step (vision.train.publish) SIGKILLed before its Nth rename:
    ``--out`` holds the earlier model whole, or no detector (the reader refuses it, naming the
    file), never a detector beside another run's face classifier; the next publish puts the new
    model in whole and removes the killed one's hidden folder. (No code change: it did so.)"""
    from vision.model_files import check_model_file
    from vision.train.publish import publish

    out, stage = tmp_path / "out", tmp_path / "stage"
    for folder, files in ((out, EARLIER), (stage, NEW)):
        folder.mkdir()
        for name, content in files.items():
            (folder / name).write_bytes(content)
    code = "import sys; from pathlib import Path; from vision.train.publish import publish; "
    code += "publish(Path(sys.argv[1]), Path(sys.argv[2]), 'm')"
    killed = _python(tmp_path, "-c", code, str(stage), str(out), kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    held = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    if kill_at <= len(NEW):
        assert held == EARLIER
    else:
        assert "m.onnx" not in held, held
        with pytest.raises(ValueError, match=f"got '{out / 'm.onnx'}' \\(no such file\\)"):
            check_model_file(out / "m.onnx", "reader model")
    again = tmp_path / "again"
    again.mkdir()
    for name, content in NEW.items():
        (again / name).write_bytes(content)
    publish(again, out, "m")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == NEW  # no hidden folder either
