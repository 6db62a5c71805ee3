"""dicecam on Windows and macOS, with any locale: what Linux can simulate of them.

The outbox's lock without ``fcntl`` (Windows' ``msvcrt.locking``, stood in for by flock here),
a console that cannot print every name (cp1252, ASCII), photos and folders named in other
scripts or with spaces, and files edited on Windows (CRLF line ends, a UTF-8 byte order mark).
"""

from __future__ import annotations

import codecs
import csv
import errno
import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image

from service.tracker_client.outbox import Outbox, OutboxEntry
from vision.atomic import file_lock
from vision.labelling import LabelledPhoto, read_labels, write_labels, write_review
from vision.types import Die
from vision.yolo_dataset import find_images, load_labels

from dicecam_testing.cli import DICECAM, ROOT, SAMPLES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="simulates Windows on POSIX")


class FakeMsvcrt:
    """Windows' ``msvcrt.locking`` as documented, on flock: ``LK_LOCK`` tries a few times (ten,
    a second apart, on Windows) and then raises OSError; the lock is of the bytes from the
    file's position, so the position must be where the lock was taken when it is let go."""

    LK_UNLCK, LK_LOCK = 0, 1

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, os.lseek(fd, 0, os.SEEK_CUR)))
        assert nbytes == 1
        if mode == self.LK_UNLCK:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return
        for _ in range(3):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.05)
        raise OSError(errno.EDEADLK, "Resource deadlock avoided")


def _two_writers(lock) -> list[str]:
    """What two threads did, each holding ``lock()`` for a while (the first 0.4 s)."""
    events: list[str] = []
    first_in = threading.Event()

    def hold(name: str, seconds: float) -> None:
        with lock():
            events.append(f"{name} in")
            first_in.set()
            time.sleep(seconds)
            events.append(f"{name} out")

    first = threading.Thread(target=hold, args=("first", 0.4))
    first.start()
    assert first_in.wait(10)
    second = threading.Thread(target=hold, args=("second", 0.0))
    second.start()
    first.join(10)
    second.join(10)
    return events


def test_the_outbox_lock_serialises_writers_where_there_is_no_fcntl(tmp_path, monkeypatch):
    fake = FakeMsvcrt()
    monkeypatch.setitem(sys.modules, "fcntl", None)  # import fcntl: ImportError, as on Windows
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    box = Outbox(tmp_path / "outbox")
    events = _two_writers(box._locked)
    assert events == ["first in", "first out", "second in", "second out"]
    # the second writer waited past LK_LOCK's giving up, and every lock was let go at byte 0
    assert fake.calls.count((fake.LK_LOCK, 0)) >= 2
    assert fake.calls.count((fake.LK_UNLCK, 0)) == 2
    assert {pos for _, pos in fake.calls} == {0}
    box.put(OutboxEntry("k1", "http://t", {"score": 50}))
    assert [e.key for e in box.entries("pending")] == ["k1"]


HOLD = """
import sys, time
from vision.atomic import file_lock
with file_lock(sys.argv[1]):
    print("in", flush=True)
    time.sleep(float(sys.argv[2]))
    print("out", flush=True)
"""


def test_file_lock_serialises_two_processes(tmp_path):
    lock = tmp_path / "dir ü" / ".lock"
    lock.parent.mkdir()
    repo = Path(__file__).resolve().parents[1]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), "0.6"],
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "in\n"
        t0 = time.monotonic()
        with file_lock(lock):
            waited = time.monotonic() - t0
        assert holder.stdout.readline() == "out\n"  # said before it let go
    finally:
        holder.wait(10)
    assert waited > 0.3


# --- a console that cannot print every name -------------------------------------------------

CONSOLES = {
    "cp1252": ({"PYTHONIOENCODING": "cp1252"}, "cp1252"),  # Windows, output redirected
    "ascii": ({"PYTHONIOENCODING": "ascii"}, "ascii"),
    "C locale": ({"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}, "utf-8"),  # names as bytes
}
WURFEL, SAIKORO = "würfel 1.jpg", "サイコロ.png"
LATIN1 = os.fsdecode(b"w\xfcrfel 2.jpg")
"""A name in Latin-1 bytes (a zip made on Windows), not UTF-8: Python holds it with surrogates."""


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``dicecam ARGS`` in a subprocess under ``env`` (PYTHONUTF8 and PYTHONIOENCODING unset
    unless given); its output as bytes."""
    base = {k: v for k, v in os.environ.items() if k not in {"PYTHONUTF8", "PYTHONIOENCODING"}}
    return subprocess.run(
        [*DICECAM, *map(str, args)],
        cwd=ROOT,
        env={**base, **(env or {})},
        capture_output=True,
        timeout=60,
    )


def _ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0 and "Traceback" not in stderr, stderr
    return done


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Path:
    """A folder with a space and an umlaut, holding photos named in German, in Japanese, and in
    Latin-1 bytes."""
    folder = tmp_path_factory.mktemp("port") / "Spiel daten ü"
    folder.mkdir()
    shutil.copy(SAMPLES[0], folder / WURFEL)
    Image.open(SAMPLES[1]).save(folder / SAIKORO)
    shutil.copy(SAMPLES[2], folder / LATIN1)
    return folder


def test_read_prints_every_name_on_a_cp1252_console(photos):
    lines = _ok(_run(["read", photos], CONSOLES["cp1252"][0])).stdout.decode("cp1252")
    names = sorted(line.split(": ")[0] for line in lines.splitlines())
    assert names == [
        str(photos / "\\u30b5\\u30a4\\u30b3\\u30ed.png"),  # サイコロ escaped: not in cp1252
        str(photos / WURFEL),
        str(photos / "würfel 2.jpg"),  # the name's byte 0xfc written back: ü in cp1252
    ]
    assert all(", values " in line for line in lines.splitlines())


def test_read_json_keeps_every_real_name(photos):
    done = _ok(_run(["read", "--json", photos], CONSOLES["ascii"][0]))
    images = {json.loads(line)["image"] for line in done.stdout.decode("ascii").splitlines()}
    assert images == {str(photos / n) for n in (WURFEL, SAIKORO, LATIN1)}
    assert all((photos / Path(i).name).is_file() for i in images)


@pytest.fixture(scope="module")
def labelled(photos, tmp_path_factory) -> Path:
    """A YOLO folder named with a space and an umlaut: the photos, a die labelled in each."""
    root = tmp_path_factory.mktemp("port") / "Würfel Sätze"
    (root / "labels").mkdir(parents=True)
    shutil.copytree(photos, root / "images")
    for photo in (root / "images").iterdir():
        (root / "labels" / f"{photo.stem}.txt").write_bytes(b"2 0.5 0.5 0.1 0.1\n")
    return root


@pytest.mark.parametrize("console", CONSOLES)
def test_labels_import_prints_its_folder_on_any_console(labelled, tmp_path, console):
    env, encoding = CONSOLES[console]
    out = tmp_path / "Übung サイコロ"
    printed = _ok(_run(["labels", "import", labelled, "--out", out], env)).stdout
    first = printed.decode(encoding).splitlines()[0]  # strict: only what the console holds
    shown = {
        "cp1252": f"{tmp_path}/Übung \\u30b5\\u30a4\\u30b3\\u30ed/data.yaml",
        "ascii": f"{tmp_path}/\\xdcbung \\u30b5\\u30a4\\u30b3\\u30ed/data.yaml",
        "C locale": f"{out}/data.yaml",  # the folder's bytes, as given
    }[console]
    assert first == f"imported 3 photos (3 dice) -> {shown}"
    assert sorted(p.name for p in (out / "images" / "train").iterdir()) == sorted(
        [WURFEL, SAIKORO, LATIN1]
    )


# --- files edited on Windows ----------------------------------------------------------------


def _labelled_photos(photos: Path) -> list[LabelledPhoto]:
    return [
        LabelledPhoto(name, 640, 480, [Die(k + 2, (100.0 + k, 120.0, 160.0, 180.0), 0.9)], path)
        for k, (name, path) in enumerate((n, photos / n) for n in (WURFEL, SAIKORO))
    ]


def _as_on_windows(folder: Path) -> int:
    """Save every text file under ``folder`` as Notepad on Windows does: CRLF line ends and a
    UTF-8 byte order mark first. The number of files changed."""
    changed = 0
    for path in folder.rglob("*"):
        if path.suffix in {".txt", ".json", ".yaml", ".names"} and path.is_file():
            text = path.read_bytes()
            assert b"\r" not in text, f"{path} has CR line ends"  # dicecam writes \n only
            path.write_bytes(codecs.BOM_UTF8 + text.replace(b"\n", b"\r\n"))
            changed += 1
    return changed


def _dice(photos: list[LabelledPhoto]) -> list[tuple]:
    return sorted(
        (Path(p.name).name, d.value, tuple(round(v, 3) for v in d.box), d.cocked, d.on_table)
        for p in photos
        for d in p.dice
    )


@pytest.mark.parametrize("fmt", ["yolo", "coco", "labelstudio"])
def test_labels_edited_on_windows_import(photos, tmp_path, fmt):
    written = _labelled_photos(photos)
    out = tmp_path / f"{fmt} ü"
    write_labels(written, out, fmt, images="copy")
    assert _as_on_windows(out) >= 1
    assert _dice(read_labels(out, image_root=out if fmt == "yolo" else photos)) == _dice(written)


READ_ALL = """
import sys
from vision.labelling import read_labels
for folder in sys.argv[1:-1]:
    print(len(read_labels(folder, image_root=sys.argv[-1])))
"""


def test_labels_are_read_as_utf8_whatever_the_locale(photos, tmp_path):
    """No label file is read in the locale's encoding (cp1252 on a Windows laptop would turn
    würfel into wÃ¼rfel): Python's EncodingWarning made an error says where one would be."""
    folders = []
    for fmt in ("yolo", "coco", "labelstudio"):
        folders.append(tmp_path / fmt)
        write_labels(_labelled_photos(photos), folders[-1], fmt, images="copy")
    done = subprocess.run(
        [sys.executable, "-X", "warn_default_encoding", "-W", "error::EncodingWarning"]
        + ["-c", READ_ALL, *map(str, folders), str(photos)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2", "2"]


def test_a_photo_named_in_latin1_bytes_goes_through_label_studio(photos, tmp_path):
    """A photo from a zip made on Windows: its name's bytes are not UTF-8."""
    written = [LabelledPhoto(LATIN1, 640, 480, [Die(4, (10.0, 20.0, 60.0, 70.0), 0.9)])]
    tasks = write_labels(written, tmp_path / "ls", "labelstudio")
    assert "w%FCrfel%202.jpg" in tasks.read_text(encoding="utf-8")  # the name's own bytes
    (back,) = read_labels(tasks, image_root=photos)
    assert (back.name, back.image) == (LATIN1, photos / LATIN1)
    assert _dice([back]) == _dice(written)


def test_the_review_table_ends_its_lines_as_every_file_dicecam_writes(photos, tmp_path):
    csv_path, _ = write_review(_labelled_photos(photos), tmp_path)
    raw = csv_path.read_bytes()
    assert b"\r" not in raw and raw.count(b"\n") == 3  # the header and a line per die
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["photo"] for r in rows] == [WURFEL, SAIKORO]


PREPARE = """
import sys
from pathlib import Path
from vision.train.pipeline import prepare_data
from vision.train.recipe import load_recipe
recipe = load_recipe(sys.argv[1])
print(recipe.card_overview_text().strip())
print(prepare_data(recipe, Path(sys.argv[2]), log=lambda _: None).data_yaml)
"""


def test_training_reads_and_writes_its_files_as_utf8_with_lf(labelled, tmp_path):
    """A recipe and card written in UTF-8, a real folder and a work folder with non-ASCII
    names: read as UTF-8 whatever the locale, data.yaml written with \\n line ends."""
    recipe = tmp_path / "Rezept ü" / "würfel.yaml"
    recipe.parent.mkdir()
    (recipe.parent / "karte.md").write_bytes("Würfel – Karte\n".encode())
    recipe.write_bytes(
        f"# Würfel – neu\nname: würfel\nsynth: {{n: 0}}\nreal: [{json.dumps(str(labelled))}]\n"
        f"card_overview: {json.dumps(str(recipe.parent / 'karte.md'))}\n".encode()
    )
    done = subprocess.run(
        [sys.executable, "-X", "warn_default_encoding", "-W", "error::EncodingWarning"]
        + ["-c", PREPARE, str(recipe), str(tmp_path / "Arbeit サイコロ")],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    card, data_yaml = done.stdout.decode().splitlines()
    assert card == "Würfel – Karte"
    raw = Path(data_yaml).read_bytes()
    assert b"\r" not in raw
    assert yaml.safe_load(raw)["train"] == [str(labelled)]


def test_a_dataset_edited_on_windows_evaluates(labelled, tmp_path):
    """data.yaml, its list of photos and the labels saved with CRLF and a byte order mark:
    ``dicecam eval`` and ``train --data`` read them as written on Linux."""
    root = tmp_path / "Satz ü"
    shutil.copytree(labelled, root)
    (root / "val.txt").write_text(f"images/{SAIKORO}\nimages/{WURFEL}\n", encoding="utf-8")
    (root / "data.yaml").write_bytes(b"val: val.txt\nnames: ['1', '2', '3', '4', '5', '6']\n")
    assert _as_on_windows(root) == 5
    images, names = find_images(root / "data.yaml", "val")
    assert [p.name for p in images] == [SAIKORO, WURFEL]
    assert names == {i: str(i + 1) for i in range(6)}
    assert [load_labels(p).labels for p in images] == [[(2, 0.5, 0.5, 0.1, 0.1)]] * 2


@pytest.mark.parametrize("key", ["turn:1", "a\\b", "a/b", "what?", "tab\there", "ends ", ".hidden"])
def test_an_outbox_key_windows_cannot_name_a_file_by_is_refused(tmp_path, key):
    box = Outbox(tmp_path)
    with pytest.raises(ValueError, match="usable as a file name on every system") as caught:
        box.put(OutboxEntry(key, "http://t", {"score": 50}))
    assert repr(key) in str(caught.value)
    assert not list(tmp_path.rglob("*.json"))
    box.put(OutboxEntry("dicecam-turn_1.b", "http://t", {"score": 50}))
    assert [e.key for e in box.entries()] == ["dicecam-turn_1.b"]


def test_a_file_held_open_on_windows_is_replaced_once_it_is_let_go(tmp_path, monkeypatch):
    """Windows refuses to replace a file another process holds open (a virus scanner, an
    indexer): the atomic writes try again for a few seconds; elsewhere the error is raised."""
    from vision import atomic

    real_replace, refusals = os.replace, []

    def held_twice(src, dst):
        if len(refusals) < 2:
            refusals.append(dst)
            raise PermissionError(13, "Access is denied", str(dst))
        real_replace(src, dst)

    target = tmp_path / "card.md"
    target.write_text("old\n")
    monkeypatch.setattr(atomic.os, "replace", held_twice)
    monkeypatch.setattr(atomic, "WINDOWS", True)
    atomic.atomic_write(target, "new\n")
    assert target.read_text() == "new\n" and len(refusals) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["card.md"]  # no temporary file left

    refusals.clear()
    monkeypatch.setattr(atomic, "WINDOWS", False)  # POSIX: no such lock, so no second try
    with pytest.raises(PermissionError, match="Access is denied"):
        atomic.atomic_write(target, "newer\n")
    assert target.read_text() == "new\n" and len(refusals) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["card.md"]
