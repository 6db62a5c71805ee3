"""Measure a reader on a YOLO-format dataset: face accuracy, recall, precision, exact photos.

A dataset (read by :mod:`vision.yolo_dataset`) is any of: a ``data.yaml`` (its ``val``/``test``/``train`` entry), a folder holding a
``data.yaml``, a folder with ``images/<split>/`` and ``labels/<split>/``, or a folder with
``images/`` and ``labels/``. Labels are ``class cx cy w h`` (normalised; polygons are reduced to
their bounding box); class ``k`` is face ``k + 1`` and class 6 (or a class named ``cocked``) a
cocked die. Synthetic sets (:mod:`vision.synth`) add ``meta/<image stem>.json`` beside
``labels/`` giving each die's state: ``{"dice": [{"state": "table", "labelled": true}, ...]}``
(``table``, ``cocked``, ``off_table``, ``in_air``; a plain list of states also works). The dice
with ``"labelled": true`` (all, without that key) line up with the label lines; dice hidden from
the camera still count for whether the roll is truly a bust. A die in the air above the playing
surface (its ``position`` within the ``scene.surface``) has not landed: it is neither on nor off,
and a photo with such a die and none off is neither a bust nor a clean roll
(:func:`vision.matching.table_state`). Then off-table recall/precision, the busts caught and the
false-bust rate are reported too, and the dice anyone could read (at rest, in view, in a sharp
photo: :func:`vision.matching.clear_die`) get face accuracy and recall of their own.

Example (``dicecam synth --n 3 --seed 7 --size 320 240 --val-fraction 0.99``, then ``dicecam
eval``; ``../shared/datasets/roboflow-dice/eval`` holds the real photos, outside the repository):
    >>> import tempfile
    >>> from vision.synth import write_dataset
    >>> folder = tempfile.TemporaryDirectory()
    >>> _ = write_dataset(folder.name, 3, seed=7, size=(320, 240), val_fraction=0.99)
    >>> result = evaluate_dataset(folder.name)  # the shipped reader, on the val split
    >>> print(result.format())  # doctest: +ELLIPSIS
    photos            2
    dice              12 true, ...
    >>> folder.cleanup()
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from vision.io import ImageError
from vision.metrics import EvalResult
from vision.types import Reading
from vision.yolo_dataset import (
    DatasetError,
    LabelledImage,
    find_images,
    iter_dataset,
    load_labels,
    shown_size,
    sibling_path,
)

__all__ = [
    "DatasetError",
    "LabelledImage",
    "ReaderLike",
    "evaluate_dataset",
    "find_images",
    "iter_dataset",
    "load_labels",
    "sibling_path",
]


class ReaderLike(Protocol):
    def read(self, image: Any, *, expected_dice: int | None = None) -> Reading: ...


def evaluate_dataset(
    dataset: str | Path,
    *,
    reader: ReaderLike | None = None,
    model: str | Path | None = None,
    split: str = "val",
    limit: int | None = None,
    all_on_table: bool = False,
    expect_count: bool = False,
    expect_rolled: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Read every photo of a YOLO-format dataset and score the readings against its labels.

    ``reader`` is any object with ``read(image) -> Reading`` (default: a :class:`DiceReader` on
    ``model``, or on the shipped model). ``progress(done, total)`` is called after each photo.
    ``all_on_table`` says that no die of a photo without a ``meta/`` sidecar left the table (a
    set of ordinary photos, such as roboflow-dice): those photos then count for the false-bust
    rate, every bust the reader calls on them being a false one. A sidecar, where there is one,
    still gives its photo's states. ``expect_count`` tells the reader how many dice each photo
    holds (its labels' count, when at least one), as the service does during a turn: the reader
    then fits its dice to that count (:mod:`vision.count`). ``expect_rolled`` tells it instead
    how many dice were rolled, from the photo's sidecar (hidden dice and dice out of the photo
    too; the labels' count without one), as a turn does: a die the photo does not show is then
    missing, a bust by default, and the busts count it.

    Raises:
        DatasetError: ``dataset`` is not a YOLO dataset, or a label file is malformed.
        ModelError: no reader was given and the model cannot be loaded.
    """
    images, names = find_images(dataset, split)
    if not images:
        raise DatasetError(f"no images found in {dataset} (split {split!r})")
    if not any(sibling_path(i, "labels", ".txt").is_file() for i in images):
        raise DatasetError(
            f"no label file for any of the {len(images)} photos of {dataset}: expected "
            f"labels/ beside images/ (e.g. {sibling_path(images[0], 'labels', '.txt')}); "
            "evaluating needs the true dice"
        )
    if limit is not None:
        images = images[:limit]
    items = [load_labels(image) for image in images]
    for item in items:  # a malformed label file or class stops the run before any photo is read
        item.truth(1, 1, names)
    if reader is None:
        from vision.reader import DiceReader

        reader = DiceReader(model)
    result = EvalResult()
    for n, (image, item) in enumerate(zip(images, items, strict=True), start=1):
        count = len(item.truth(1, 1, names)) if expect_count or expect_rolled else 0
        if expect_rolled and item.rolled is not None:
            count = item.rolled
        try:
            reading = reader.read(image, expected_dice=count) if count else reader.read(image)
        except ImageError as exc:  # an unreadable photo: its dice are missed
            size = shown_size(image)  # a truncated photo's header still gives its dice's sizes
            truth = item.truth(*(size or (1, 1)), names)
            result.add_error(str(image), str(exc), truth, sized=size is not None)
        else:
            reading.image = str(image)
            truth = item.truth(reading.width, reading.height, names)
            known, bust = item.states is not None, item.bust
            if not known and all_on_table:
                known, bust = True, False
            settled = bust is not None or not known  # None from a sidecar: still rolling
            result.add(
                truth,
                reading,
                states_known=known,
                truth_bust=bust,
                settled=settled,
                surface_in_view=item.surface_in_view,
            )
        if progress is not None:
            progress(n, len(images))
    return result
