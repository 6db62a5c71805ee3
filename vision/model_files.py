"""Model files: the one check that a path names an ONNX file dicecam can load.

:func:`check_model_file` is what the reader (its model, ``DICECAM_MODEL`` or ``--model``) and
the ``DICECAM_*_MODEL`` settings refuse a path with, each message saying what was expected and
what came.

Example:
    >>> check_model_file("/no/such.onnx", "face classifier")
    Traceback (most recent call last):
    ...
    ValueError: expected the face classifier (an ONNX file), got '/no/such.onnx' (no such file)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["check_model_file"]


def check_model_file(
    value: Any, what: str, *, off: str = "", leave_out: tuple[str, ...] = ()
) -> Path:
    """``value`` as the path of the ONNX ``what`` (``"reader model"``, ``"face classifier"``):
    a file that is there, can be read and is no PyTorch checkpoint; else ValueError saying what
    was expected (``off``: what else the setting takes, such as ``none``) and what came:
    nothing, a folder (naming the ``.onnx`` files in it whose name does not end with one of
    ``leave_out``), something not a file, a file it cannot read, a ``.pt`` checkpoint.

    The caller names the setting or flag that gave ``value`` (a settings error names its
    variable; the CLI adds ``(named by --model)``).
    """
    expected = f"expected the {what} (an ONNX file){off}, got {str(value)!r}"
    if not str(value).strip():
        raise ValueError(f"{expected} (empty)")
    path = Path(value)
    if path.is_dir():
        found = sorted(f.name for f in path.glob("*.onnx") if not f.stem.endswith(leave_out))
        inside = f"; it holds {', '.join(found)}" if found else " with no .onnx in it"
        raise ValueError(f"{expected} (a folder{inside})")
    if not path.exists():
        raise ValueError(f"{expected} (no such file)")
    if not path.is_file():
        raise ValueError(f"{expected} (not a regular file)")
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise ValueError(f"{expected} (cannot read it: {exc.strerror or exc})") from None
    if head == b"PK\x03\x04" or head[:1] == b"\x80":  # torch.save: a zip, or an old pickle
        raise ValueError(
            f"{expected} (a PyTorch checkpoint, for training, not its ONNX export: "
            f"{path.with_suffix('.onnx').name} beside it, if it is there)"
        )
    return path
