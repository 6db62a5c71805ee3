"""A reader that reports the rolls a test queues, photos for the service to take turns with, and
the service served with that reader."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

import httpx
from PIL import Image

from vision import Die, Reading, load_image

__all__ = ["QueueReader", "dice", "jpeg", "turns_service"]

_shots = count(1)


class QueueReader:
    """Decodes each photo for real, then reports the next roll of dice it was given.

    Example:
        >>> reader = QueueReader()
        >>> reader.rolls.append(dice([1, 5]))
        >>> reader.read(jpeg()).values
        [1, 5]
    """

    def __init__(self) -> None:
        self.rolls: list[list[Die]] = []

    def read(self, image, expected_dice=None) -> Reading:
        img = load_image(image)
        return Reading(img.width, img.height, self.rolls.pop(0), expected_dice=expected_dice)


def dice(values: list[int], off: int = 0) -> list[Die]:
    """Dice in a row on the table showing ``values``, then ``off`` dice off the table."""
    out = [Die(v, (10 + 50 * i, 10, 50 + 50 * i, 50), 0.95) for i, v in enumerate(values)]
    out += [Die(3, (400 + 40 * i, 200, 430 + 40 * i, 230), 0.9, on_table=False) for i in range(off)]
    return out


def jpeg(width: int = 640, height: int = 480) -> bytes:
    """A distinct photo each call (the service caches readings by photo bytes)."""
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (30, 100, 50)).save(
        buf, "JPEG", comment=f"shot {next(_shots)}"
    )
    return buf.getvalue()


@contextmanager
def turns_service(data_dir: Path) -> Iterator[object]:
    """The service on ``data_dir`` (no tracker, no submitter) with a :class:`QueueReader`,
    served for real; the server has ``app``, ``reader`` and ``client`` (of ``/api/v1``)."""
    from service.app import create_app
    from service.settings import Settings

    from dicecam_testing.servers import LiveServer

    reader = QueueReader()
    app = create_app(Settings(data_dir=data_dir), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as srv:
        srv.app, srv.reader = app, reader
        srv.client = httpx.Client(base_url=srv.url + "/api/v1", timeout=30)
        yield srv
        srv.client.close()
