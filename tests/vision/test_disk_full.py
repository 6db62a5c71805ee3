"""A disk that fills (or a write that fails) part way through a long command: ``dicecam train``
(the detector's checkpoints, the face classifier's weights, the export), ``dicecam synth`` and
``dicecam label``. Each ends in one line naming the file that could not be written and why, exit
status 1, no traceback, and nothing cut left where a later run or the reader would take it for a
result; a rerun once there is room works.

The disk is simulated in the process: the lowest write the code uses (a file's ``write``,
``os.sendfile``, ``Path.write_bytes``, ``torch.save``) fails with ENOSPC or torch's RuntimeError
after writing part of its bytes, as a full disk does.
"""

from __future__ import annotations

import builtins
import errno
import io
from pathlib import Path

import pytest

from service.cli import main

FULL = "No space left on device"


class _FullFile(io.FileIO):
    """A file on a disk with ``room`` bytes left: a write past them writes what fits and fails."""

    room = 0

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        if len(data) > _FullFile.room:
            super().write(data[: _FullFile.room])
            _FullFile.room = 0
            raise OSError(errno.ENOSPC, FULL)
        _FullFile.room -= len(data)
        return super().write(data)


def full_disk(monkeypatch, folder: Path, room: int = 0) -> None:
    """Files opened for writing under ``folder`` are on a disk with ``room`` bytes left."""
    real_open = builtins.open
    _FullFile.room = room

    def open_(file, mode="r", *args, **kwargs):
        if isinstance(file, int | bytes) or not Path(file).resolve().is_relative_to(folder):
            return real_open(file, mode, *args, **kwargs)
        if not any(m in mode for m in "wax+"):
            return real_open(file, mode, *args, **kwargs)
        raw = _FullFile(file, mode.replace("b", "").replace("t", "") or "r")
        return raw if "b" in mode else io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8")

    monkeypatch.setattr(builtins, "open", open_)


def _one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("dicecam ")]
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"dicecam {command}: error: "), err
    return lines[0]


def _litter(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*"))


def test_synth_preview_on_a_full_disk_is_one_line_and_no_half_sheet(tmp_path, monkeypatch, capsys):
    """cv2.imwrite's libpng wrote 'libpng error: Write Error' and dicecam called a full disk
    a usage error (exit 2, 'could not write'), leaving what it had written of the sheet."""
    sheet = tmp_path / "sheet.png"
    full_disk(monkeypatch, tmp_path, room=1000)
    argv = ["synth", "--preview", str(sheet), "--n", "1", "--size", "128", "128", "--tile", "64"]
    assert main(argv) == 1
    assert _one_line(capsys, "synth") == f"dicecam synth: error: {FULL}: {sheet}"
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert main(argv) == 0 and sheet.read_bytes().startswith(b"\x89PNG")


def test_synth_on_a_full_disk_leaves_whole_photos_with_labels_and_says_how_to_go_on(
    tmp_path, monkeypatch, capsys
):
    from PIL import Image

    out = tmp_path / "set"
    full_disk(monkeypatch, tmp_path, room=20_000)  # a photo or two at 256x256
    argv = ["synth", "--out", str(out), "--n", "6", "--size", "256", "256", "--quiet"]
    assert main(argv) == 1
    line = _one_line(capsys, "synth")
    assert line.startswith(f"dicecam synth: error: {FULL}: {out}/"), line
    photos = sorted((out / "images" / "train").glob("*.jpg"))
    assert len(photos) < 6 and _litter(out) == []
    for photo in photos:
        with Image.open(photo) as im:
            im.load()  # whole
        assert (out / "labels" / "train" / f"{photo.stem}.txt").is_file()
    monkeypatch.undo()
    assert main(argv) == 0 and len(list((out / "images" / "train").glob("*.jpg"))) == 6
    with pytest.raises(SystemExit):
        main(["synth", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "A run stopped part way (Ctrl-C, a full disk) leaves the images written so far" in said
