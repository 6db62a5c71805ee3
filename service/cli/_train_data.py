"""The checks of ``dicecam train --data`` folders, before minutes of training find a mistake."""

from __future__ import annotations

from pathlib import Path

from service.cli import UsageError

__all__ = ["ONE_FACE_FROM", "check_data"]


def check_data(folders: list[Path]) -> None:
    """UsageError unless each ``--data`` folder is a YOLO folder whose labels training can read
    (:func:`_check_labels`) and whose dice do not all show one face (:func:`_check_faces`)."""
    faces: list[int] = []
    for d in folders:
        if not d.is_dir():
            raise UsageError(f"--data must be a YOLO dataset folder, got {d} (not a folder)")
        faces += _check_labels(d)
    _check_faces(faces)


ONE_FACE_FROM = 12
"""So many dice labelled, all with the same face, is a labelling mistake (a tool's one-class
export, a label left as the first of the list): one roll of 12 dice shows a single face once in
about 60 million."""


def _check_faces(faces: list[int]) -> None:
    """Refuse ``--data`` whose dice all show one face: fine-tuning taught the face classifier
    that every die of the new style reads that face."""
    if len(faces) >= ONE_FACE_FROM and len(set(faces)) == 1:
        raise UsageError(
            f"--data: expected dice labelled with their top faces 1..6, got all {len(faces)} "
            f"labelled {faces[0]} (a one-class export, such as 'die', reads as class 0: 1); "
            "give each die its face and import again"
        )


def _check_labels(folder: Path) -> list[int]:
    """Every label line of a ``--data`` folder names a class 0..6 and a finite box with some
    area, before minutes of training find out (:func:`vision.yolo_dataset.load_labels` reads
    them). Returns the faces labelled (cocked dice left out)."""
    from vision.io import IMAGE_SUFFIXES, TRAINING_SUFFIXES
    from vision.yolo_dataset import DatasetError, load_labels

    _check_class_names(folder)
    faces: list[int] = []
    for image in sorted(folder.rglob("*")):
        if image.suffix.lower() not in IMAGE_SUFFIXES or "images" not in image.parts:
            continue
        if image.suffix.lower() not in TRAINING_SUFFIXES:
            raise UsageError(
                f"--data {folder}: {image.name}: training reads JPEG, PNG, BMP, WebP or TIFF "
                f"photos, got {image.suffix}; save it as JPEG (its labels stay as they are)"
            )
        try:
            truth = load_labels(image).truth(1, 1)  # it checks each class, as dicecam eval does
        except DatasetError as exc:
            raise UsageError(f"--data {folder}: {image.name}: {exc}") from None
        faces += [die.value for die in truth if die.value is not None]
    return faces


def _check_class_names(folder: Path) -> None:
    """Refuse a ``--data`` folder whose data.yaml names its classes other than training reads
    them (class k is face k + 1, class 6 a cocked die): a one-class ``die`` export, faces in
    another order (``6`` first), colours. Training reads the class numbers and not the names,
    so it would learn every die of such a folder as the wrong face."""
    from vision.yolo_dataset import YAML_NAMES, DatasetError, class_names

    found = [folder / name for name in YAML_NAMES if (folder / name).is_file()]
    if not found:
        return
    try:
        names = class_names(found[0])
    except (OSError, UnicodeDecodeError, DatasetError) as exc:
        raise UsageError(f"--data {folder}: cannot read {found[0].name}: {exc}") from None
    except ValueError:  # class keys that are not numbers: training stops on them anyway
        return
    if names is None:
        return
    said = {k: name.strip().lower() for k, name in names.items()}
    wrong = {
        k: name
        for k, name in said.items()
        if not ("cock" in name if k == 6 else name == str(k + 1))
    }
    if wrong:
        got = ", ".join(f"{k}: {name!r}" for k, name in sorted(wrong.items()))
        raise UsageError(
            f"--data {folder}: expected its data.yaml to name class 0 '1' to class 5 '6' "
            f"(and 6 'cocked'), as training reads them, got {got}; label each die with its "
            "face (dicecam labels import writes such a folder)"
        )
