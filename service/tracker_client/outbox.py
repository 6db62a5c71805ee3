"""The on-disk outbox: every turn is written here before it is sent.

Layout under the outbox folder: ``pending/<key>.json`` (not yet acknowledged),
``delivered/<key>.json`` (with the tracker's answer), ``rejected/<key>.json`` (with the tracker's
reason; kept, never deleted). Every write is atomic: temporary file, fsync, ``os.replace``, fsync
of the folder, so a process killed at any instant leaves either the old or the new file. Writers
take turns on ``.lock`` in the folder (the service's retries and ``dicecam outbox deliver`` may
run at once), and a turn settled as delivered or rejected is never put back to pending by a
writer that read it before it was settled.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vision.atomic import atomic_write, file_lock, fsync_dir

__all__ = ["Outbox", "OutboxEntry"]

STATES = ("pending", "delivered", "rejected")
_NOT_IN_NAMES = set('<>:"/\\|?*') | {chr(c) for c in range(32)}
"""Characters Windows refuses in a file name (``:`` would name an NTFS stream of the file)."""
_NOT_IN_NAMES_SHOWN = " ".join('<>:"/\\|?*')


@dataclass
class OutboxEntry:
    key: str
    base_url: str
    turn: dict[str, Any]
    """The JSON body of ``POST /api/v1/turns`` (photos base64)."""
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    attempts: int = 0
    next_attempt_at: float = 0.0
    """Unix time before which ``deliver_pending`` leaves this entry alone (backoff)."""
    last_error: str | None = None
    result: dict[str, Any] | None = None
    state: str = "pending"


_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "base_url": (str,),
    "turn": (dict,),
    "created_at": (str,),
    "attempts": (int,),
    "next_attempt_at": (int, float),
    "last_error": (str, type(None)),
    "result": (dict, type(None)),
    "state": (str,),
}


def _check_types(entry: OutboxEntry) -> None:
    """TypeError naming the first field of a hand-edited entry whose JSON type is wrong."""
    for name, types in _TYPES.items():
        value = getattr(entry, name)
        if not isinstance(value, types) or isinstance(value, bool):
            expected = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise TypeError(f"expected {name} to be {expected}, got {value!r}")
    if entry.state not in STATES:
        raise TypeError(f"expected state among {', '.join(STATES)}, got {entry.state!r}")


class Outbox:
    """A folder of turns waiting for (or done with) delivery (default ``<data dir>/outbox``).

    Example:
        >>> import tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> box = Outbox(folder.name)
        >>> _ = box.put(OutboxEntry("k1", "http://t", {"score": 50}))
        >>> [e.key for e in box.entries("pending")]
        ['k1']
        >>> folder.cleanup()
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        if directory is None:  # the service's: <data dir>/outbox
            from service.settings import Settings

            directory = Path(Settings().data_dir).expanduser() / "outbox"
        self.directory = Path(directory).expanduser()
        for state in STATES:
            (self.directory / state).mkdir(parents=True, exist_ok=True)

    def _path(self, state: str, key: str) -> Path:
        if state not in STATES:
            raise ValueError(f"expected an outbox state in {STATES}, got {state!r}")
        if not key or key.startswith(".") or key.endswith(" ") or set(key) & _NOT_IN_NAMES:
            raise ValueError(
                "expected an idempotency key usable as a file name on every system (no "
                f"{_NOT_IN_NAMES_SHOWN}, control character, leading dot or trailing space), "
                f"got {key!r}"
            )
        return self.directory / state / f"{key}.json"

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """One writer at a time, across threads and processes (``.lock`` in the folder)."""
        return file_lock(self.directory / ".lock")

    def write(self, entry: OutboxEntry) -> None:
        """Write ``entry`` under its state, then remove it from any other state. A pending
        ``entry`` whose turn another writer has meanwhile settled (delivered or rejected) is
        not written: the settled one stays."""
        data = json.dumps(asdict(entry), separators=(",", ":")).encode()
        with self._locked():
            if entry.state == "pending" and any(
                self._path(s, entry.key).exists() for s in ("delivered", "rejected")
            ):
                return
            atomic_write(self._path(entry.state, entry.key), data, mode=0o600)
            for other in STATES:
                if other != entry.state:
                    self._path(other, entry.key).unlink(missing_ok=True)
            fsync_dir(self.directory)

    def put(self, entry: OutboxEntry) -> None:
        """Queue a new turn; a key already present (in any state) is left as it is."""
        if self.find(entry.key) is not None:
            return
        entry.state = "pending"
        self.write(entry)

    def find(self, key: str) -> OutboxEntry | None:
        for state in ("delivered", "rejected", "pending"):
            entry = self._read(self._path(state, key))
            if entry is not None:
                return entry
        return None

    def _read(self, path: Path) -> OutboxEntry | None:
        try:
            raw = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # never written by write()
            raise ValueError(f"outbox file {path} is not valid JSON: {exc}") from exc
        try:
            if not isinstance(raw, dict):
                raise TypeError(f"expected a JSON object, got {type(raw).__name__}")
            entry = OutboxEntry(**raw)
            _check_types(entry)
        except TypeError as exc:
            raise ValueError(f"outbox file {path} is not an outbox entry: {exc}") from exc
        return entry

    def entries(self, state: str = "pending") -> Iterator[OutboxEntry]:
        folder = self.directory / state
        if state not in STATES:
            raise ValueError(f"expected an outbox state in {STATES}, got {state!r}")
        for path in sorted(folder.glob("*.json")):
            try:
                entry = self._read(path)
            except ValueError:
                continue  # listed by unreadable(); never deleted
            if entry is not None and entry.state == state:
                yield entry

    def unreadable(self) -> list[Path]:
        """Files in the outbox that are not entries of their folder (edited or copied by hand?):
        not JSON, not an entry, or an entry whose ``state`` names another folder (a delivered
        turn copied into ``pending/``). Skipped, kept as they are."""
        bad = []
        for state in STATES:
            for path in sorted((self.directory / state).glob("*.json")):
                try:
                    entry = self._read(path)
                except ValueError:
                    bad.append(path)
                    continue
                if entry is not None and entry.state != state:
                    bad.append(path)
        return bad

    def counts(self) -> dict[str, int]:
        return {s: len(list((self.directory / s).glob("*.json"))) for s in STATES}
