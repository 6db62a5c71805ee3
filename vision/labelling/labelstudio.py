"""Label Studio tasks with pre-annotations, its labelling config, and reading its exports back.

Layout written by :func:`write_labelstudio`::

    OUT/tasks.json               import into a project ("Import" -> upload this file)
    OUT/labeling-config.xml      paste into Settings -> Labeling Interface -> Code
    OUT/images/<photo>           (only with images="copy"/"link")

Each task's ``predictions`` hold one ``rectanglelabels`` region per die (percentage boxes, label
``"1"``..``"6"``, per-box ``score``); a die off the table or cocked gets a per-region ``choices``
result (``"off table"``, ``"cocked"``) with the same region ``id``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vision.atomic import atomic_write
from vision.types import Die

from .checks import Once, on_photo
from .locate import PhotoFinder
from .model import (
    VALUE_NAMES,
    ImageMode,
    LabelFormatError,
    LabelledPhoto,
    check_box,
    entry,
    flat_names,
    image_size,
    label_confidence,
    name_of_die,
    number,
    place_photo,
    read_json,
    size,
    value_of_name,
)

__all__ = ["LOCAL_FILES_PREFIX", "labelstudio_config", "read_labelstudio", "write_labelstudio"]

LOCAL_FILES_PREFIX = "/data/local-files/?d="
"""Label Studio serves files under ``LOCAL_FILES_DOCUMENT_ROOT`` at this URL prefix."""

FROM_NAME, TO_NAME, STATE_NAME = "label", "image", "state"
OFF_TABLE, COCKED = "off table", "cocked"
_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4")


def labelstudio_config() -> str:
    """The labelling config XML matching the tasks :func:`write_labelstudio` writes."""
    labels = "\n".join(
        f'    <Label value="{n}" background="{c}"/>'
        for n, c in zip((*VALUE_NAMES, COCKED), (*_COLOURS, "#808080"), strict=True)
    )
    return (
        "<View>\n"
        f'  <Image name="{TO_NAME}" value="$image" zoom="true" zoomControl="true"/>\n'
        f'  <RectangleLabels name="{FROM_NAME}" toName="{TO_NAME}" strokeWidth="2">\n'
        f"{labels}\n"
        "  </RectangleLabels>\n"
        f'  <Choices name="{STATE_NAME}" toName="{TO_NAME}" perRegion="true" '
        'choice="multiple" showInline="true">\n'
        f'    <Choice value="{OFF_TABLE}"/>\n'
        f'    <Choice value="{COCKED}"/>\n'
        "  </Choices>\n"
        "</View>\n"
    )


def _regions(photo: LabelledPhoto, *, human: bool = False) -> list[dict[str, Any]]:
    results = []
    for i, die in enumerate(photo.dice):
        label = name_of_die(die, f"{photo.name} (Label Studio)")
        x1, y1, x2, y2 = (float(v) for v in die.box)
        geometry = {
            "x": 100.0 * x1 / photo.width,
            "y": 100.0 * y1 / photo.height,
            "width": 100.0 * (x2 - x1) / photo.width,
            "height": 100.0 * (y2 - y1) / photo.height,
            "rotation": 0,
        }
        common = {
            "id": f"die{i + 1}",
            "to_name": TO_NAME,
            "original_width": photo.width,
            "original_height": photo.height,
            "image_rotation": 0,
            "origin": "manual" if human else "prediction",
        }
        rect = {**common, "from_name": FROM_NAME, "type": "rectanglelabels"}
        rect["value"] = {**geometry, "rectanglelabels": [label]}
        if not human:
            rect["score"] = round(label_confidence(die), 4)
        results.append(rect)
        flags = ([OFF_TABLE] if not die.on_table else []) + ([COCKED] if die.cocked else [])
        if flags:
            state = {**common, "from_name": STATE_NAME, "type": "choices"}
            state["value"] = {**geometry, "choices": flags}
            results.append(state)
    return results


def labelstudio_task(
    photo: LabelledPhoto, image_url: str, *, model_version: str = "dicecam", task_id: int = 1
) -> dict[str, Any]:
    """One Label Studio task for ``photo`` with its dice as pre-annotations."""
    scores = [label_confidence(d) for d in photo.dice]
    return {
        "id": task_id,
        "data": {
            "image": image_url,
            "name": photo.name,
            "width": photo.width,
            "height": photo.height,
        },
        "predictions": [
            {
                "model_version": model_version,
                "score": round(min(scores), 4) if scores else 0.0,
                "result": _regions(photo),
            }
        ],
    }


def write_labelstudio(
    photos: Sequence[LabelledPhoto],
    out: str | os.PathLike[str],
    *,
    images: ImageMode = "none",
    image_prefix: str = LOCAL_FILES_PREFIX,
    model_version: str = "dicecam",
) -> Path:
    """Write ``tasks.json`` and ``labeling-config.xml`` into ``out``; return the tasks file.

    ``data.image`` is ``image_prefix`` + the photo's name, URL-quoted (``images="none"``), or
    ``images/<flat name>`` when the photos are copied or linked into ``out``. With the default
    prefix, start Label Studio with ``LOCAL_FILES_SERVING_ENABLED=true`` and
    ``LOCAL_FILES_DOCUMENT_ROOT`` set to the photos folder (or ``out``); pass an ``http://``
    prefix to serve them from elsewhere.

    The task's prediction ``score`` is its least confident die, so Label Studio's
    "sort by prediction score" puts the photos most in need of review first.
    """
    out = Path(out)
    flats = flat_names(photos, portable=images != "none")
    tasks = []  # every die checked before anything is written: a bad value left half a folder
    for n, (photo, flat) in enumerate(zip(photos, flats, strict=True), 1):
        rel = photo.name.replace("\\", "/") if images == "none" else f"images/{flat}"
        url = image_prefix + quote(os.fsencode(rel), safe="/")  # a name's own bytes
        tasks.append(labelstudio_task(photo, url, model_version=model_version, task_id=n))
    out.mkdir(parents=True, exist_ok=True)
    if images != "none":
        for photo, flat in zip(photos, flats, strict=True):
            place_photo(photo, out / "images" / flat, images)
    atomic_write(out / "labeling-config.xml", labelstudio_config())
    path = out / "tasks.json"
    atomic_write(path, json.dumps(tasks, indent=1))
    return path


# ---------------------------------------------------------------------------------- reading back


def _when(annotation: dict[str, Any]) -> datetime:
    """When an annotation was last saved (Label Studio's ISO times, offsets and all)."""
    text = str(annotation.get("updated_at") or annotation.get("created_at") or "")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _pick_result(task: dict[str, Any]) -> tuple[list[dict[str, Any]], bool] | None:
    """The corrected result (latest annotation not cancelled), else the best prediction; None
    for a task whose every annotation was cancelled (skipped by the person reviewing it: its
    prediction is not a label anyone checked), or that nobody annotated in an export that gives
    its predictions as ids only."""
    given = task.get("annotations") or []
    annotations = [a for a in given if not a.get("was_cancelled")]
    if given and not annotations:
        return None
    if annotations:
        latest = max(enumerate(annotations), key=lambda ia: (_when(ia[1]), ia[0]))[1]
        return _merge_regions(list(latest.get("result") or [])), True
    given_predictions = task.get("predictions") or []
    # Label Studio's JSON export lists a task's predictions by id only (its export serializer):
    # a task nobody annotated then holds no boxes anyone checked, and is left out too
    predictions = [p for p in given_predictions if isinstance(p, dict)]
    if given_predictions and not predictions:
        return None
    if predictions:
        best = max(predictions, key=lambda p: float(p.get("score") or 0.0))
        return _merge_regions(list(best.get("result") or [])), False
    return [], False


def _merge_regions(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A config of ``<Rectangle>`` and ``<Labels>`` gives each region as a ``rectangle`` and a
    ``labels`` result of the same id: join them into the ``rectanglelabels`` of ours."""
    labels = {r.get("id"): r for r in results if r.get("type") == "labels" and r.get("id")}
    merged = []
    for r in results:
        if r.get("type") == "rectangle":
            names = ((labels.get(r.get("id")) or {}).get("value") or {}).get("labels") or []
            r = {
                **r,
                "type": "rectanglelabels",
                "value": {**(r.get("value") or {}), "rectanglelabels": names},
            }
        if r.get("type") != "labels" or r.get("id") not in labels:
            merged.append(r)
    return merged


def _box(value: dict[str, Any], width: int, height: int, where: str) -> tuple[float, ...]:
    if not all(k in value for k in ("x", "y", "width", "height")):
        raise LabelFormatError(f"{where}: expected x, y, width, height in percent")
    x = number(value["x"], "x", where) * width / 100
    y = number(value["y"], "y", where) * height / 100
    w = number(value["width"], "width", where) * width / 100
    h = number(value["height"], "height", where) * height / 100
    angle = math.radians(number(value.get("rotation") or 0.0, "rotation", where))
    if angle == 0.0:
        return check_box((x, y, x + w, y + h), where)
    cos, sin = math.cos(angle), math.sin(angle)
    xs = [x + px * cos - py * sin for px, py in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [y + px * sin + py * cos for px, py in ((0, 0), (w, 0), (w, h), (0, h))]
    return check_box((min(xs), min(ys), max(xs), max(ys)), where)


def _flags(results: list[dict[str, Any]], where: str) -> dict[str, set[str]]:
    """The per-region choices of ``results`` by region id; words of ours checked.

    Raises:
        LabelFormatError: choices that are not a list of words, or a word of our ``state``
            choices other than ``"off table"`` and ``"cocked"``.
    """
    flags: dict[str, set[str]] = {}
    for r in results:
        if r.get("type") != "choices" or not r.get("id"):
            continue
        words = (r.get("value") or {}).get("choices") or []
        region = f"{where}: region {r['id']}"
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise LabelFormatError(f"{region}: expected choices as a list of words, got {words!r}")
        unknown = [w for w in words if w not in (OFF_TABLE, COCKED)]
        if r.get("from_name", STATE_NAME) == STATE_NAME and unknown:
            raise LabelFormatError(
                f"{region}: expected the choices {OFF_TABLE!r} and {COCKED!r}, got {unknown}"
            )
        flags.setdefault(r["id"], set()).update(words)
    return flags


def _task_photo(task: dict[str, Any], finder: PhotoFinder, where: str) -> LabelledPhoto | None:
    data = task.get("data") or {}
    url = data.get("image") or next((v for v in data.values() if isinstance(v, str)), None)
    if not url:
        raise LabelFormatError(f"{where}: expected data.image (the photo), got {data!r}")
    url = str(url)
    image = finder.find(url, where)
    if image is None and data.get("name"):  # ours: the photo's name in the labelled folder
        image = finder.find(str(data["name"]), where)
    name = str(data.get("name") or finder.name(url, image))
    picked = _pick_result(task)
    if picked is None:
        return None
    results, _human = picked
    rects = [r for r in results if r.get("type") == "rectanglelabels"]
    sizes = [(r.get("original_width"), r.get("original_height")) for r in rects]
    if sizes and all(sizes[0]):
        width, height = (
            size(sizes[0][0], "original_width", where),
            size(sizes[0][1], "original_height", where),
        )
    elif image is not None:
        width, height = image_size(image)
    elif data.get("width") and data.get("height"):
        width, height = size(data["width"], "width", where), size(data["height"], "height", where)
    elif not rects:
        width, height = 0, 0  # no dice to place; the photo itself is reported missing later
    else:
        raise LabelFormatError(f"{where}: photo {name!r} not found and no original size given")
    flags = _flags(results, where)
    dice = []
    regions = Once("region id")
    for n, r in enumerate(rects, 1):
        if r.get("id") is not None:  # a region's choices are joined to it by id
            regions.add(r["id"], repr(r["id"]), f"{where}: region {n}", f"region {n}")
        labels = (r.get("value") or {}).get("rectanglelabels") or []
        if len(labels) != 1:
            raise LabelFormatError(f"{where}: region {r.get('id')} needs one label, got {labels}")
        value, cocked = value_of_name(labels[0], f"{where}: region {r.get('id')}")
        state = flags.get(r.get("id"), set())
        region = f"{where}: region {r.get('id')}"
        box = on_photo(_box(r["value"], width, height, region), width, height, region)
        score = r.get("score")
        dice.append(
            Die(
                value,
                box,  # type: ignore[arg-type]
                1.0 if score is None else number(score, "score", where),
                OFF_TABLE not in state,
                cocked or COCKED in state,
            )
        )
    return LabelledPhoto(name, width, height, dice, image)


def read_labelstudio(
    path: str | os.PathLike[str], *, image_root: str | os.PathLike[str] | None = None
) -> list[LabelledPhoto]:
    """Read a Label Studio JSON export (or our own ``tasks.json``) into labelled photos.

    For each task the latest annotation that was not cancelled wins (the human correction, even
    when it removed every box); a task nobody annotated falls back to its best prediction, and
    one whose every annotation was cancelled (skipped) is left out.
    Photos are found under ``image_root`` (default: the export's folder) as
    :class:`~vision.labelling.locate.PhotoFinder` finds them (Label Studio's upload and Local
    Files URLs, its hash prefixes; in subfolders too when ``image_root`` is given).

    Raises:
        LabelFormatError: not a list of tasks, a region without exactly one face label, two
            regions of one id in a task (their choices could not be told apart), a choice
            other than "off table" and "cocked", two photos that fit one task, or
            (``image_root`` given) photos not found there.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "tasks.json"
    data = read_json(path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise LabelFormatError(f"{path}: expected a Label Studio JSON export (a list of tasks)")
    if any("data" not in t and ("annotation_id" in t or "annotator" in t) for t in data):
        raise LabelFormatError(
            f"{path}: expected Label Studio's JSON export (tasks with 'data' and 'annotations'), "
            "got its JSON-MIN export, which drops which die each 'off table'/'cocked' choice "
            "belongs to: export the project as JSON instead"
        )
    root = Path(image_root) if image_root is not None else path.parent
    finder = PhotoFinder([root], subfolders=image_root is not None)
    photos, missing = [], []
    once = Once("photo")
    for n, task in enumerate(data, 1):
        where = f"{path}: task {task.get('id', n)}"
        with entry(where):
            photo = _task_photo(task, finder, where)
        if photo is not None:
            key = photo.image.resolve() if photo.image else photo.name
            once.add(key, repr(photo.name), where, f"task {task.get('id', n)}")
            photos.append(photo)
            if photo.image is None:
                missing.append(
                    (f"task {task.get('id', n)}", str(task["data"].get("image") or photo.name))
                )
    if image_root is not None:  # the photos are wanted from there
        finder.check(path, missing)
    return photos
