"""Files a user cares about survive a process killed mid-write and a disk that fills.

A child process writes under a file-size limit (``RLIMIT_FSIZE``): the write that crosses it
either kills the process on the spot (``SIGXFSZ`` at its default action: no cleanup, as in a
crash) or fails with ``EFBIG`` (as on a full disk). Both work as root, where ``chmod`` stops
nothing. The old file must still be whole afterwards, and a failed write must leave no litter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED_CHECK = REPO / "models" / "dicecam-reader-verify.onnx"
OTHER_MODEL = REPO / "models" / "dicecam-reader-cocked.onnx"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE and SIGXFSZ are POSIX")


def _child(code: str, cwd: Path, *, limit: int, kill: bool = True) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter whose files may not grow past ``limit`` bytes:
    crossing it kills it (``kill``) or fails with OSError EFBIG."""
    prelude = textwrap.dedent(
        f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.{"SIG_DFL" if kill else "SIG_IGN"})
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_write_killed_halfway_keeps_the_old_file(tmp_path: Path):
    target = tmp_path / "labels.json"
    target.write_text('{"old": true}')
    done = _child(
        "from vision.atomic import atomic_write\natomic_write('labels.json', 'x' * 100_000)",
        tmp_path,
        limit=4096,
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert target.read_text() == '{"old": true}'
    assert all(n.endswith(".tmp") for n in _litter(tmp_path))  # a killed process cannot clean up


def test_a_write_that_fails_keeps_the_old_file_and_leaves_nothing(tmp_path: Path):
    target = tmp_path / "card.md"
    target.write_text("# good card\n")
    done = _child(
        """
        from vision.atomic import atomic_write
        try:
            atomic_write('card.md', 'x' * 100_000)
        except OSError as exc:
            print(exc.errno)
        """,
        tmp_path,
        limit=4096,
        kill=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(__import__("errno").EFBIG)
    assert target.read_text() == "# good card\n"
    assert _litter(tmp_path) == []


def test_a_new_file_gets_the_umask_and_a_replaced_one_keeps_its_mode(tmp_path: Path):
    from vision.atomic import atomic_write

    new = atomic_write(tmp_path / "new.txt", "a")
    assert new.stat().st_mode & 0o777 == 0o666 & ~_umask()
    private = tmp_path / "private.txt"
    private.write_text("a")
    private.chmod(0o640)  # not 0o600, the mode of the temporary file it is written as
    atomic_write(private, "b")
    assert private.stat().st_mode & 0o777 == 0o640
    assert atomic_write(tmp_path / "p.json", "{}", mode=0o600).stat().st_mode & 0o777 == 0o600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_card_written_over_a_good_one_by_a_killed_train_keeps_the_good_one(tmp_path: Path):
    card = tmp_path / "dicecam-reader.md"
    card.write_text("# dicecam-reader\n\nthe shipped card\n")
    card.with_suffix(".json").write_text('{"name": "dicecam-reader", "evaluations": {}}')
    done = _child(
        """
        from vision.train.card import write_card
        write_card('dicecam-reader.md', name='dicecam-reader', summary='s' * 20_000, data=[],
                   command='dicecam train', recipe={}, evaluations={})
        """,
        tmp_path,
        limit=8192,
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert card.read_text() == "# dicecam-reader\n\nthe shipped card\n"
    assert card.with_suffix(".json").read_text().startswith('{"name": "dicecam-reader"')


@pytest.mark.skipif(
    not (SHIPPED_CHECK.is_file() and OTHER_MODEL.is_file()), reason="no shipped models to copy"
)
@pytest.mark.parametrize("writer", ["export", "copy", "metadata"])
def test_a_model_written_over_a_shipped_one_by_a_killed_train_keeps_the_shipped_one(
    tmp_path: Path, writer: str
):
    """The exports, copies and metadata rewrites of ``dicecam train`` into models/."""
    pytest.importorskip("onnx")
    if writer == "export":
        pytest.importorskip("torch")
    import onnxruntime as ort

    shipped = tmp_path / "m-verify.onnx"
    shipped.write_bytes(SHIPPED_CHECK.read_bytes())
    code = {
        "export": "from vision.train.classifier import FaceNet, export_classifier\n"
        "export_classifier(FaceNet(1.0, 6), 'm-verify.onnx')",
        "copy": f"from vision.atomic import atomic_copy\n"  # detector export, .pt, fine-tuning
        f"atomic_copy({str(OTHER_MODEL)!r}, 'm-verify.onnx')",
        "metadata": "from vision.train.offtable import add_metadata\n"
        "add_metadata('m-verify.onnx', {'threshold': 0.5, 'note': 'n' * 400_000})",
    }[writer]
    limit = shipped.stat().st_size // 4 if writer != "metadata" else shipped.stat().st_size + 1000
    done = _child(code, tmp_path, limit=limit)
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert shipped.read_bytes() == SHIPPED_CHECK.read_bytes()
    ort.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])  # loads as before


def test_a_synth_run_killed_halfway_leaves_no_photo_without_its_labels(tmp_path: Path):
    """A photo without a label file trains the detector to see its dice as background."""
    from PIL import Image

    done = _child(
        "from vision.synth.dataset import write_dataset\n"
        "write_dataset('set', 3, seed=1, size=(640, 480), val_fraction=0.0)",
        tmp_path,
        limit=16384,  # the labels and the metadata fit, a 640x480 photo does not
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    for photo in (tmp_path / "set" / "images" / "train").glob("*.jpg"):
        with Image.open(photo) as im:
            im.load()  # whole
        assert (tmp_path / "set" / "labels" / "train" / f"{photo.stem}.txt").is_file()


def test_a_failed_write_says_why_and_names_the_file(tmp_path: Path):
    """PIL raises an OSError with a message only: naming the file in it printed
    "[Errno None] None: 'photo.jpg'" in place of the reason. An OSError with an errno names the
    file the user knows, not the temporary one."""
    import errno

    from PIL import Image

    from vision.atomic import replacing

    target = tmp_path / "photo.jpg"
    target.write_bytes(b"old")
    refused = pytest.raises(OSError, match="^cannot write mode RGBA as JPEG$")
    with refused, replacing(target) as part:
        Image.new("RGBA", (4, 4)).save(part, format="JPEG")
    with pytest.raises(OSError) as caught, replacing(target):
        raise OSError(errno.ENOSPC, "No space left on device")
    assert caught.value.filename == str(target)
    assert str(caught.value) == f"[Errno {errno.ENOSPC}] No space left on device: {str(target)!r}"
    with pytest.raises(OSError) as caught, replacing(target) as part:  # as part.write_bytes
        raise OSError(errno.EFBIG, "File too large", str(part))
    assert caught.value.filename == str(target)
    assert target.read_bytes() == b"old"
    assert _litter(tmp_path) == []


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_write_stopped_by_ctrl_c_or_exit_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, stop: type[BaseException]
):
    """Ctrl-C (KeyboardInterrupt) or a SIGTERM handler's exit half way through a write is no
    Exception: the old file stays, its temporary file goes, and the stop goes on up."""
    from vision.atomic import replacing

    target = tmp_path / "outbox.json"
    target.write_text('{"old": true}')
    with pytest.raises(stop), replacing(target) as part:
        part.write_text('{"new": tr')
        raise stop()
    assert target.read_text() == '{"old": true}'
    assert _litter(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two other users")
def test_another_users_running_process_counts_as_running():
    """``kill(pid, 0)`` on another user's process fails with EPERM: it runs, so the temporary
    files it writes in a shared folder are not taken for a dead writer's."""
    from vision.atomic import process_running

    sleeper = subprocess.Popen(["sleep", "30"], user=65534)
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - the forked checker, as another user
            try:
                os.setuid(65533)
                os._exit(0 if process_running(sleeper.pid) else 1)
            finally:
                os._exit(2)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not process_running(sleeper.pid)


def test_text_naming_a_file_by_non_utf8_bytes_is_written_as_those_bytes(tmp_path: Path):
    """A photo named in Latin-1 bytes comes to Python as surrogates (``os.fsdecode``): a list
    of photos written with it holds the name's own bytes, the rest as UTF-8."""
    from vision.atomic import atomic_write

    name = os.fsdecode(b"d\xe9-1.jpg")  # 'd\udce9-1.jpg'
    out = atomic_write(tmp_path / "labels.txt", f"{name} 5\n\u00e9\n")
    assert out.read_bytes() == b"d\xe9-1.jpg 5\n\xc3\xa9\n"
