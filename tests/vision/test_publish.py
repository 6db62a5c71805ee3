"""Putting a fine-tuned model into ``--out`` (vision.train.publish): stopped at any file (Ctrl-C,
SIGTERM) or by a full disk, ``--out`` holds the earlier model whole or no model of that name,
never a detector beside another run's companions, and the line printed says which."""

from __future__ import annotations

import errno
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import vision.train.publish as publish_module
from service.cli import main
from vision.atomic import atomic_copy, replace_file, writer
from vision.train.publish import publish

from dicecam_testing.finetune import new_dice, stand_in_training, starting_model

EARLIER = {
    "mine-ft.onnx": b"earlier detector",
    "mine-ft-faces.onnx": b"earlier faces",
    "mine-ft-verify.onnx": b"earlier die check",
    "mine-ft.md": b"earlier card",
}
NEW = {
    "mine-ft.onnx": b"new detector",
    "mine-ft-faces.onnx": b"new faces",
    "mine-ft-faces.pt": b"new faces pt",
    "mine-ft.md": b"new card",
    "mine-ft.json": b"{}",
}

AGAIN = "; the same command starts again"

needs_train = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)


def _files(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def _held(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _stop_at(monkeypatch, call: int, exc: BaseException) -> None:
    """publish's ``call``-th file move (1 = the first) raises ``exc`` instead."""
    calls = [0]

    def replace(src, dst) -> None:
        calls[0] += 1
        if calls[0] == call:
            raise exc
        replace_file(src, dst)

    monkeypatch.setattr(publish_module, "replace_file", replace)


def test_a_publish_puts_the_new_model_in_whole(tmp_path):
    out = _files(tmp_path / "out", {**EARLIER, "other.onnx": b"another model"})
    placed = publish(_files(tmp_path / "stage", NEW), out, "mine-ft")
    assert sorted(p.name for p in placed) == sorted(NEW)
    # the earlier die check, which the new model has none of, went with it; others stay
    assert _held(out) == {**NEW, "other.onnx": b"another model"}


def test_stopped_at_any_file_out_holds_the_earlier_model_whole_or_none(tmp_path, monkeypatch):
    """The detector (which selects the model) was moved in last, after the companions: stopped
    after the first file, --out held the earlier detector beside the new face classifier, a
    mixed model the reader loaded, and the CLI said --out was left as it was."""
    moves = 2 * len(NEW)  # into the hidden folder in out, then into place
    outcomes = set()
    for call in range(1, moves + 1):
        out = _files(tmp_path / f"out{call}", EARLIER)
        _stop_at(monkeypatch, call, KeyboardInterrupt())
        with pytest.raises(KeyboardInterrupt) as stopped:
            publish(_files(tmp_path / f"stage{call}", NEW), out, "mine-ft")
        held = _held(out)
        if "mine-ft.onnx" in held:
            assert held == EARLIER, f"stopped at file {call}: {held}"
            assert str(stopped.value).startswith(f"{out} left as it was (no model of this run")
            outcomes.add("earlier")
        else:
            assert str(stopped.value).startswith(f"{out} holds no model mine-ft now: the earlier")
            assert "the same command makes it again" in str(stopped.value)
            outcomes.add("none")
    assert outcomes == {"earlier", "none"}
    monkeypatch.undo()
    publish(_files(tmp_path / "stage-again", NEW), out, "mine-ft")  # no hidden folder left over
    assert _held(out) == NEW


def test_two_publishes_of_one_name_at_once_do_not_take_each_others_files(tmp_path, monkeypatch):
    """Both used the hidden folder .NAME.publish, and a publish removed it as it began: one
    started while another moved its files in removed them, and the first failed (its files
    gone). Each has its own now; the one that switches last is the model in out, whole."""
    out = _files(tmp_path / "out", EARLIER)
    other = {**NEW, "mine-ft.onnx": b"other detector", "mine-ft-verify.onnx": b"other check"}
    calls = [0]

    def replace(src, dst) -> None:
        calls[0] += 1
        if calls[0] == 1:  # the first publish has made its folder: the other runs whole now
            placed = publish(_files(tmp_path / "other", other), out, "mine-ft")
            assert {p.name: p.read_bytes() for p in placed} == other
        replace_file(src, dst)

    monkeypatch.setattr(publish_module, "replace_file", replace)
    publish(_files(tmp_path / "stage", NEW), out, "mine-ft")
    assert _held(out) == NEW


def test_the_next_publish_removes_the_hidden_folders_of_publishes_no_longer_running(tmp_path):
    """Killed outright (SIGKILL), a publish leaves its hidden folder. The next publish of the
    name removes those of processes of this machine that are gone, and the .NAME.publish of
    earlier versions; a running publish's, another machine's and another name's stay."""
    out = _files(tmp_path / "out", EARLIER)
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait(timeout=60)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    machine = writer().split("-")[1]
    other = f"{int(machine, 16) ^ 1:08x}"
    names = {
        ".mine-ft.publish": False,  # an earlier version's
        f".mine-ft.{ended.pid}-{machine}.abcd_123.publish": False,  # killed
        f".mine-ft.{running.pid}-{machine}.abcd_123.publish": True,  # publishing still
        f".mine-ft.{ended.pid}-{other}.abcd_123.publish": True,  # another machine's
        f".yours.{ended.pid}-{machine}.abcd_123.publish": True,  # another model's
    }
    try:
        for name in names:
            _files(out / name, {"mine-ft.onnx": b"half"})
        publish(_files(tmp_path / "stage", NEW), out, "mine-ft")
        assert sorted(p.name for p in out.iterdir()) == sorted(
            [*NEW, *(n for n, stays in names.items() if stays)]
        )
    finally:
        running.kill()
        running.wait(timeout=60)


def test_an_earlier_detector_that_cannot_be_removed_leaves_the_earlier_model(tmp_path, monkeypatch):
    """As on Windows while a reader has it open: the message follows what is on disk."""
    real_unlink = Path.unlink

    def unlink(path: Path, missing_ok: bool = False) -> None:
        if path.name == "mine-ft.onnx" and path.parent.name == "out":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    out = _files(tmp_path / "out", EARLIER)
    with pytest.raises(PermissionError) as refused:
        publish(_files(tmp_path / "stage", NEW), out, "mine-ft")
    assert str(refused.value) == (
        f"[Errno 13] Permission denied: {out / 'mine-ft.onnx'}; {out} left as it was "
        f"(no model of this run there){AGAIN}"
    )
    assert _held(out) == EARLIER


def test_a_full_disk_while_copying_from_another_disk_leaves_the_earlier_model(
    tmp_path, monkeypatch
):
    """With the work folder on another disk each file was copied into --out in turn: a disk
    that filled at the second left the new face classifier beside the earlier detector."""
    copies = [0]

    def across_disks(src, dst) -> None:
        if Path(src).parent.name == "stage":
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(src))
        replace_file(src, dst)

    def copy(src, dst) -> Path:
        copies[0] += 1
        if copies[0] == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return atomic_copy(src, dst)

    monkeypatch.setattr(publish_module, "replace_file", across_disks)
    monkeypatch.setattr(publish_module, "atomic_copy", copy)
    out = _files(tmp_path / "out", EARLIER)
    with pytest.raises(OSError) as full:
        publish(_files(tmp_path / "stage", NEW), out, "mine-ft")
    assert full.value.errno == errno.ENOSPC
    assert str(full.value).endswith(f"; {out} left as it was (no model of this run there)" + AGAIN)
    assert _held(out) == EARLIER  # no hidden folder left either


@needs_train
@pytest.mark.parametrize(
    ("call", "says", "holds"),
    [
        (2, "left as it was (no model of this run there)", EARLIER),
        (7, "holds no model mine-ft now", None),
    ],
    ids=["first-file-in", "while-switching"],
)
def test_dicecam_train_stopped_while_it_puts_the_model_in_says_what_out_holds(
    call, says, holds, tmp_path, monkeypatch, capsys
):
    stand_in_training(monkeypatch)
    out = _files(tmp_path / "out", EARLIER)
    argv = ["train", "--from", str(starting_model(tmp_path / "base")), "--data"]
    argv += [str(new_dice(tmp_path / "data")), "--out", str(out), "--detector", "keep"]
    argv += ["--replay", "0", "--work", str(tmp_path / "work")]
    _stop_at(monkeypatch, call, KeyboardInterrupt())
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.startswith(f"dicecam train: interrupted: {out} {says}")
    assert len(err.splitlines()) == 1, err
    if holds is not None:
        assert _held(out) == holds
    else:
        assert "mine-ft.onnx" not in _held(out)
    assert not [p for p in out.iterdir() if p.name.endswith(".publish")]
    monkeypatch.setattr(publish_module, "replace_file", replace_file)
    assert main(argv) == 0
    assert sorted(_held(out)) == sorted(
        ["mine-ft.onnx", "mine-ft.pt", "mine-ft-faces.onnx", "mine-ft-faces.pt", "mine-ft.md"]
        + ["mine-ft.json"]
    )


@needs_train
def test_a_full_disk_while_fine_tuning_writes_is_one_line_and_keeps_the_earlier_model(
    tmp_path, monkeypatch, capsys
):
    import vision.train.card as card

    stand_in_training(monkeypatch)

    def full(path, data, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(card, "atomic_write", full)
    out = _files(tmp_path / "out", EARLIER)
    argv = ["train", "--from", str(starting_model(tmp_path / "base")), "--data"]
    argv += [str(new_dice(tmp_path / "data")), "--out", str(out), "--detector", "keep"]
    argv += ["--replay", "0", "--work", str(tmp_path / "work")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    card_path = tmp_path / "work" / "mine-ft" / "model" / "mine-ft.md"
    assert err == (
        f"dicecam train: error: No space left on device: {card_path}; {out} left as it was "
        f"(no model of this run there){AGAIN}\n"
    )
    assert _held(out) == EARLIER


def test_train_help_says_what_becomes_of_a_model_already_in_out(capsys):
    with pytest.raises(SystemExit) as done:
        main(["train", "--help"])
    assert done.value.code == 0
    said = " ".join(capsys.readouterr().out.split())
    assert (
        "--out OUT folder for the exported models (default models/, or runs/finetune for "
        "--from); a model of that --name already there is kept until the new one is complete, "
        "then replaced whole (a --stage other than all writes its files as it goes)" in said
    )
