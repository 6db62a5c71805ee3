"""Model files: the one check that a path names an ONNX file dicecam can load, and the models
loaded from such files, kept per file.

:func:`check_model_file` is what the reader (its model, ``DICECAM_MODEL`` or ``--model``) and
the ``DICECAM_*_MODEL`` settings refuse a path with, each message saying what was expected and
what came. :func:`kept_model` loads a model once per file and options: ``dicecam serve`` loads at
start the models a setting names, to refuse one that does not load, and its first photo then
reads with those same models instead of loading them again.

Example:
    >>> check_model_file("/no/such.onnx", "face classifier")
    Traceback (most recent call last):
    ...
    ValueError: expected the face classifier (an ONNX file), got '/no/such.onnx' (no such file)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["MODELS_KEPT", "check_model_file", "kept_model"]

T = TypeVar("T")

MODELS_KEPT = 16
"""How many loaded models the process keeps for :func:`kept_model` (the oldest used goes
first): the reader's detector, its three second-stage models and the table step's two, with
room for a reader of another model beside them."""

_kept: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
_kept_lock = threading.Lock()


def check_model_file(
    value: Any, what: str, *, off: str = "", leave_out: tuple[str, ...] = (), hint: str = ""
) -> Path:
    """``value`` as the path of the ONNX ``what`` (``"reader model"``, ``"face classifier"``):
    a file that is there, can be read and is no PyTorch checkpoint; else ValueError saying what
    was expected (``off``: what else the setting takes, such as ``none``), what came (nothing,
    a folder, naming the ``.onnx`` files in it whose name does not end with one of
    ``leave_out``; something not a file, a file it cannot read, a ``.pt`` checkpoint) and
    ``hint``: how to name the file, such as the setting and flag that do.

    A settings error names the variable that gave ``value``; the CLI adds ``(named by --model)``.
    """
    expected = f"expected the {what} (an ONNX file){off}, got {str(value)!r}"
    hint = f": {hint}" if hint else ""
    if not str(value).strip():
        raise ValueError(f"{expected} (empty){hint}")
    path = Path(value)
    if path.is_dir():
        found = sorted(f.name for f in path.glob("*.onnx") if not f.stem.endswith(leave_out))
        inside = f"; it holds {', '.join(found)}" if found else " with no .onnx in it"
        raise ValueError(f"{expected} (a folder{inside}){hint}")
    if not path.exists():
        raise ValueError(f"{expected} (no such file){hint}")
    if not path.is_file():
        raise ValueError(f"{expected} (not a regular file){hint}")
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise ValueError(f"{expected} (cannot read it: {exc.strerror or exc}){hint}") from None
    if head == b"PK\x03\x04" or head[:1] == b"\x80":  # torch.save: a zip, or an old pickle
        raise ValueError(
            f"{expected} (a PyTorch checkpoint, for training, not its ONNX export: "
            f"{path.with_suffix('.onnx').name} beside it, if it is there){hint}"
        )
    return path


def kept_model(path: str | Path, options: tuple[Hashable, ...], load: Callable[[], T]) -> T:
    """``load()``, the model of the file ``path`` with ``options`` (its kind and whatever else
    sets it up: threads, threshold), loaded once: a later call for the same file, unchanged
    (its size, time and inode), and the same options gets the same object. Up to
    :data:`MODELS_KEPT` are kept; a failed load keeps nothing and raises what ``load`` raised.
    """
    try:
        resolved = Path(path).resolve()
        st = resolved.stat()
    except (OSError, RuntimeError):  # not there (load says so), a symlink loop
        return load()
    key = (str(resolved), st.st_size, st.st_mtime_ns, st.st_ino, *options)
    with _kept_lock:
        model = _kept.get(key)
        if model is not None:
            _kept.move_to_end(key)
            return model
    model = load()  # outside the lock: a slow load does not hold up another file's
    with _kept_lock:
        model = _kept.setdefault(key, model)  # a load of another thread meanwhile wins
        _kept.move_to_end(key)
        while len(_kept) > MODELS_KEPT:
            _kept.popitem(last=False)
    return model
