"""The dice reader as the service holds it: loaded lazily, once, and never fatal.

The service also owns the reader's table step: the calibration file of the service's settings
(``DICECAM_CALIBRATION`` or ``<data dir>/calibration.json``) is checked before every read, so a
boundary stored by ``PUT /api/v1/calibration`` or ``dicecam calibrate`` applies to the next read
without a restart (cached readings are dropped when it changes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import HTTPException

from service.api.errors import unreadable_photo
from service.api.read_queue import ReadQueue
from service.logs import Failure

__all__ = ["ReaderService", "model_threads"]

log = logging.getLogger("dicecam.service")
_UNSEEN: Any = object()


def _default_factory() -> Any:
    from vision import DiceReader

    return DiceReader()


def _image_error_types() -> tuple[type[BaseException], ...]:
    try:
        from vision import ImageError
    except Exception:  # vision not importable: any ValueError from the reader means a bad image
        return (ValueError,)
    return (ImageError,)


class ReaderService:
    """Holds one reader. ``read`` turns reader failures into HTTP errors a person understands.

    Example:
        >>> from pathlib import Path
        >>> svc = ReaderService()  # the shipped reader (or DICECAM_MODEL), loaded at the first photo
        >>> svc.read(Path("datasets/samples/roll-s21-009.jpg").read_bytes()).values
        [3, 4, 1, 1, 1]
        >>> svc.read(b"not a photo")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        fastapi.exceptions.HTTPException: 415: dicecam cannot read this photo: not an image ...
    """

    retry_after_s = 30.0
    cache_size = 32
    """Recent readings by photo hash: the page reads a photo, then posts the same photo as the
    roll; the roll reuses the reading instead of running the model twice."""

    def __init__(
        self,
        reader: Any | None = None,
        factory: Callable[[], Any] | None = None,
        *,
        calibration_path: Path | None = None,
        missing_is_bust: bool = True,
        queue: ReadQueue | None = None,
    ) -> None:
        self._reader = reader
        self._factory = factory or _default_factory
        self._from_settings = reader is None and factory is None
        """The reader is the shipped one's, loaded from ``DICECAM_MODEL`` (or models/)."""
        self._lock = threading.Lock()
        self._failed_at: float | None = None
        self._failure: str | None = None
        self._cache: OrderedDict[tuple[int, int | None, bytes], Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.queue = queue or ReadQueue.from_settings()
        """Reads at once and reads waiting (``DICECAM_READ_WORKERS``, ``DICECAM_READ_QUEUE``):
        :meth:`read_queued` reads through it."""
        self.missing_is_bust = missing_is_bust
        """Copied into every reading (``DICECAM_MISSING_DICE``: bust or ask the player)."""
        self.calibration_path = calibration_path
        self._table_lock = threading.Lock()
        self._calibration: Any = None
        self.calibration_error: str | None = None
        self._signature: Any = _UNSEEN
        self._generation = 0
        """Bumped when the calibration changes: cached readings of other generations are stale."""
        self._installed = -1
        """The generation whose table step the loaded reader has."""

    @property
    def loaded(self) -> bool:
        return self._reader is not None

    def status(self) -> dict[str, Any]:
        """Whether the reader is loaded (it loads at the first photo), the last load error, the
        model file it loads (``configured_model``: ``DICECAM_MODEL`` or ``dicecam serve
        --model``, else the shipped one), and once loaded its model file, the runtime of its
        detector and the file of each second-stage model (face classifier, cocked-die model,
        die check; None when absent)."""
        reader = self._reader
        model = getattr(reader, "model_path", None)
        stages = None
        if reader is not None:
            from vision.stages import STAGES

            stages = {}
            for name in STAGES:
                path = getattr(getattr(reader, name, None), "model_path", None)
                stages[name] = None if path is None else Path(path).name
        return {
            "loaded": self.loaded,
            "error": self._failure,
            "model": None if model is None else str(model),
            "configured_model": self._configured_model(),
            "backend": getattr(reader, "backend", None),
            "stages": stages,
        }

    def _configured_model(self) -> str | None:
        """The model file the reader loads (``DICECAM_MODEL``, else the shipped one), known
        before the first photo loads it; None for a reader given by the caller."""
        if not self._from_settings:
            return None
        from pydantic import ValidationError

        from vision.config import VisionSettings

        try:
            return str(VisionSettings().model)
        except ValidationError:  # another DICECAM_* setting: "error" names it once loading
            return None

    def get(self) -> Any:
        if self._reader is not None:
            return self._reader
        with self._lock:
            if self._reader is not None:
                return self._reader
            if (
                self._failed_at is not None
                and time.monotonic() - self._failed_at < self.retry_after_s
            ):
                raise HTTPException(
                    503,
                    f"the dice reader is unavailable ({self._failure}); type the values by hand "
                    "meanwhile",
                )
            try:
                self._reader = self._factory()
            except Exception as exc:
                self._failed_at = time.monotonic()
                self._failure = f"{type(exc).__name__}: {exc}"
                raise HTTPException(
                    503,
                    f"the dice reader could not be loaded ({self._failure}); "
                    "type the values by hand meanwhile",
                ) from None
            self._failure = None
            return self._reader

    # -- calibration -------------------------------------------------------------------------
    def calibration(self) -> Any:
        """The stored :class:`vision.table.Calibration`, or None (reloaded when the file changed)."""
        self._sync_calibration()
        return self._calibration

    def calibration_changed(self) -> None:
        """Forget what was seen of the calibration file: the next read reloads it (call after
        writing or removing it, in case the file's time stamp did not move)."""
        with self._table_lock:
            self._signature = _UNSEEN
        self._sync_calibration()

    def _file_signature(self) -> tuple[int, int, int] | None:
        if self.calibration_path is None:
            return None
        try:
            st = self.calibration_path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _sync_calibration(self) -> None:
        if self.calibration_path is None:
            return
        signature = self._file_signature()
        if signature == self._signature:
            return
        with self._table_lock:
            if signature == self._signature:
                return
            from vision.table import Calibration, CalibrationError

            try:
                self._calibration = Calibration.load(self.calibration_path)
                self.calibration_error = None
            except CalibrationError as exc:  # the learned outline meanwhile; GET shows why
                log.warning("calibration ignored: %s", exc)
                self._calibration, self.calibration_error = None, str(exc)
            self._signature = signature
            self._generation += 1
        with self._cache_lock:
            self._cache.clear()

    def _install_table(self, reader: Any) -> None:
        """Give a reader with a table step (``reader.table``, as :class:`vision.DiceReader`) the
        service's calibration, or the learned outline when there is none."""
        if self.calibration_path is None or self._installed == self._generation:
            return
        with self._table_lock:
            generation, calibration = self._generation, self._calibration
            if self._installed == generation or not hasattr(reader, "table"):
                self._installed = generation
                return
            from vision.table import TableSettings, TableStage

            settings = TableSettings()
            if not settings.table:  # DICECAM_TABLE=0: no table step at all
                self._installed = generation
                return
            current = reader.table
            model = getattr(current, "model", None)
            dice_model = getattr(current, "dice_model", None)
            if model is None:  # with a calibration too: photos of another shape get it
                model = _learned_outline_model()
            if model is not None and dice_model is None:
                dice_model = _learned_offtable_model()  # the learned outline's partner
            if calibration is None and model is None:
                reader.table = None
            else:  # the reader's own stage, every setting kept, with the service's calibration
                surface = {
                    "model": model,
                    "calibration": calibration,
                    "dice_model": dice_model,
                    "die_check": getattr(current, "die_check", None)
                    or getattr(reader, "verify", None),
                }
                reader.table = (
                    current.replace(**surface)
                    if isinstance(current, TableStage)
                    else TableStage(min_confidence=settings.offtable_min_conf, **surface)
                )
            self._installed = generation

    def _finish(self, result: Any, reader: Any, expected_dice: int | None) -> Any:
        """The reading as the service reports it: the calibration applied for a reader without
        a table step of its own, and the missing-dice policy."""
        cal = self._calibration
        if cal is not None and not hasattr(reader, "table") and hasattr(result, "dice"):
            from vision.table import apply_table

            if cal.fits(result.width, result.height):
                outline = cal.outline(result.width, result.height)
                apply_table(result, outline, source="calibration")
            elif hasattr(result, "outline_note"):
                result.outline_note = cal.misfit(result.width, result.height, "no outline")
        return _replace(result, expected_dice=expected_dice, missing_is_bust=self.missing_is_bust)

    # -- reading -----------------------------------------------------------------------------
    async def read_queued(self, photo: bytes, expected_dice: int | None = None) -> Any:
        """:meth:`read` on one of the queue's workers, once one is free (admit the photo with
        ``queue.ticket()`` before reading its upload)."""
        return await self.queue.run(self.read, photo, expected_dice)

    def read(self, photo: bytes, expected_dice: int | None = None) -> Any:
        """Read a photo; 415 for a file that is not an image, :class:`service.logs.Failure`
        (500 with an error id, the reader's error in the server's log) when the reader fails."""
        self._sync_calibration()
        generation = self._generation
        # the dice count is part of the key: the reader fits its dice to it (vision.count)
        key = (generation, expected_dice, hashlib.sha256(photo).digest())
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is not None:
            return _replace(hit, expected_dice=expected_dice, missing_is_bust=self.missing_is_bust)
        reader = self.get()
        self._install_table(reader)
        bad_image = _image_error_types()
        try:
            result = reader.read(photo, expected_dice=expected_dice)
        except bad_image as exc:
            raise unreadable_photo(exc) from None
        except HTTPException:
            raise
        except Exception as exc:  # 500 with an error id; the log says why (service.logs)
            raise Failure("the dice reader failed on this photo") from exc
        result = self._finish(result, reader, expected_dice)
        if generation == self._generation:  # not read across a calibration change
            with self._cache_lock:
                self._cache[key] = result
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return result


def _replace(result: Any, **fields: Any) -> Any:
    """A copy of a dataclass reading with ``fields`` changed (those it has)."""
    if not dataclasses.is_dataclass(result):
        return result
    names = {f.name for f in dataclasses.fields(result)}
    return dataclasses.replace(result, **{k: v for k, v in fields.items() if k in names})


def model_threads() -> int:
    """The threads the service's reader runs its models with (``DICECAM_THREADS``). The outline
    and off-table models the service loads beside the reader (for a reader without them, and
    for the calibration proposals) run with as many: a model is kept per file and threads
    (:func:`vision.model_files.kept_model`), so they are the reader's own and the ones
    ``dicecam serve`` checked at start, each file loaded once."""
    from pydantic import ValidationError

    from vision.config import VisionSettings

    try:
        return VisionSettings().threads
    except ValidationError:  # a DICECAM_* setting the reader's load names; its default here
        return int(VisionSettings.model_fields["threads"].default)


def _learned_outline_model() -> Any:
    """The learned outline model of the settings, or None when it is absent or broken."""
    from vision.table import SurfaceModelError, learned_outline

    try:
        return learned_outline(threads=model_threads())
    except SurfaceModelError as exc:
        log.warning("learned outline unavailable: %s", exc)
        return None


def _learned_offtable_model() -> Any:
    """The off-table die model of the settings, or None when it is absent or broken."""
    from vision.table import learned_offtable

    try:
        return learned_offtable(threads=model_threads())
    except Exception as exc:  # a broken file: the outline alone judges, as without one
        log.warning("off-table die model unavailable: %s", exc)
        return None
