"""A disk that fills, simulated in the process: files opened for writing under a folder fail
with ENOSPC once the bytes left are written, after writing what fits, as a full disk does."""

from __future__ import annotations

import builtins
import errno
import io
from pathlib import Path

__all__ = ["FULL", "TINY", "full_disk"]

FULL = "No space left on device"

TINY = """
name: tiny
synth: {{n: 4, seed: 3, size: [128, 128], val_fraction: 0.25}}
test: {{n: 0, seed: 5, size: [128, 128]}}
real: []
detector:
  model: {model}
  imgsz: 64
  epochs: 1
  batch: 4
  cache: false
  single_cls: true
  augment: {{mosaic: 0.0}}
faces: {{epochs: 1, batch: 32, jitter: 0}}
"""
"""The smallest training recipe, ``{model}`` its detector's model YAML (``TINY.format(...)``)."""


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
