"""``dicecam train`` without ``--from``: the shipped reader from its recipe, step by step."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from pathlib import Path

from vision.atomic import atomic_write

from .recipe import REPO, Recipe

__all__ = ["evaluate_model", "synth_test_set", "train_reader"]

ROBOFLOW_EVAL = REPO.parent / "shared" / "datasets" / "roboflow-dice" / "eval"


def evaluate_model(
    model: Path,
    dataset: Path,
    *,
    split: str = "val",
    limit: int | None = None,
    all_on_table: bool = False,
) -> dict | None:
    """Figures of ``model`` on ``dataset`` (None when the dataset is absent); ``all_on_table``
    as in :func:`vision.evaluate.evaluate_dataset`."""
    from vision.evaluate import evaluate_dataset

    if not Path(dataset).exists():
        return None
    result = evaluate_dataset(
        dataset, model=model, split=split, limit=limit, all_on_table=all_on_table
    )
    print(f"== {model.name} on {dataset} ({split})\n{result.format()}")
    return result.to_dict()


def synth_test_set(recipe: Recipe, work: Path) -> Path | None:
    """Render (once) the recipe's held-out synthetic test set; None when it has no images."""
    from vision.synth import write_dataset

    t = recipe.test
    if t.n == 0:
        return None
    if t.seed == recipe.synth.seed:
        raise ValueError(f"the test seed must differ from the training seed, both are {t.seed}")
    out = work / f"synth-test-s{t.seed}-{t.n}"
    done = out / "DONE"
    if not done.is_file():
        write_dataset(out, t.n, seed=t.seed, size=tuple(t.size), val_fraction=0.0)
        atomic_write(done, "ok\n")  # a full disk names it
    return out


def _quantize_faces(faces: Path, train_dirs: list[Path]) -> Path:
    """Export the float face classifier ``faces.pt`` to ``faces`` (ONNX) again and quantize it
    to int8, calibrated on crops of the dice of ``train_dirs``."""
    from .classifier import export_classifier, load_classifier
    from .crops import load_crops
    from .quantize import CALIBRATION_CROPS, quantize_classifier

    weights = faces.with_suffix(".pt")
    crops, _ = load_crops(train_dirs, jitter=0)
    export_classifier(load_classifier(weights), faces)
    quantize_classifier(faces, crops)
    used = min(CALIBRATION_CROPS, len(crops))
    print(f"face classifier -> {faces} (int8, calibrated on {used} of {len(crops)} die crops)")
    return faces


def train_reader(recipe: Recipe, args: argparse.Namespace) -> int:
    from .card import write_card
    from .detector import train_detector
    from .pipeline import prepare_data, ship_detector, train_faces

    name = args.name or recipe.name
    out = (args.out or REPO / "models").resolve()
    work = args.work.resolve()
    onnx = out / f"{name}.onnx"
    faces = out / f"{name}-faces.onnx"
    stage = args.stage
    soup = getattr(args, "soup", None)
    if stage == "int8" and not faces.with_suffix(".pt").is_file():  # before rendering any data
        raise FileNotFoundError(
            f"expected the face classifier's float weights at {faces.with_suffix('.pt')}: the "
            "int8 build is made from them (train them with --stage faces)"
        )
    if soup and stage == "detector":  # averaging needs no data
        return _ship_soup(soup, work, onnx, imgsz=recipe.detector.imgsz)
    prepared = prepare_data(recipe, work, extra=args.data, workers=args.workers)
    if stage == "data":
        print(f"data ready: {prepared.data_yaml}")
        return 0
    if stage == "int8":
        _quantize_faces(faces, prepared.train_dirs)
        return 0
    if stage == "all" and soup:
        _ship_soup(soup, work, onnx, imgsz=recipe.detector.imgsz)
    elif stage in ("all", "detector"):
        d = recipe.detector
        weights = train_detector(
            prepared.data_yaml,
            work / "detector",
            model=d.model_path(),
            cache=d.cache,
            imgsz=d.imgsz,
            epochs=d.epochs,
            batch=d.batch,
            seed=args.seed,
            augment=d.augment,
            time_hours=d.time_hours,
            single_cls=d.single_cls,
        )
        ship_detector(weights, onnx, imgsz=d.imgsz)
        print(f"detector -> {onnx}")
    if stage in ("all", "faces"):
        init = getattr(args, "faces_init", None)
        train_faces(
            recipe,
            prepared.train_dirs,
            faces,
            val_dirs=prepared.val_dirs,
            init=init,
            seed=args.seed,
            join=getattr(args, "faces_join", None),
        )
        print(f"face classifier -> {faces}")
    if stage in ("all", "card"):
        evaluations = {}
        if prepared.synth_dir is not None:
            evaluations["synthetic val"] = evaluate_model(onnx, prepared.synth_dir, split="val")
        test = synth_test_set(recipe, work)
        if test is not None:
            evaluations[f"synthetic test (seed {recipe.test.seed}, held out)"] = evaluate_model(
                onnx, test, split="train"
            )
        evaluations["roboflow-dice eval (real)"] = evaluate_model(
            onnx, ROBOFLOW_EVAL, all_on_table=True
        )
        card = write_card(
            out / f"{name}.md",
            name=name,
            summary=(
                "Dice reader: a YOLO detector (ultralytics, exported to ONNX) finds every die; a "
                "small CNN reads each die's top face (1-6, or cocked) from a crop of the photo."
            ),
            data=[
                f"Synthetic: {recipe.synth.n} images rendered by `dicecam synth` (seed "
                f"{recipe.synth.seed}, {recipe.synth.size[0]}x{recipe.synth.size[1]}).",
                *[
                    f"Real: {p}" + (f" (listed {k} times: weighs {k}x)" if k > 1 else "")
                    for p, k in Counter(recipe.real).items()
                ],
                *[f"Extra: {p}" for p in args.data or []],
            ],
            command="\n".join(recipe.reproduce)
            or "dicecam train " + " ".join(shlex.quote(a) for a in sys.argv[2:]),
            recipe=recipe.model_dump(mode="json"),
            evaluations=evaluations,
            notes=recipe.notes,
            extra=recipe.card_extra_text(),  # `dicecam train` checked both before training
            overview=recipe.card_overview_text(),
        )
        print(f"model card -> {card}")
    return 0


def _ship_soup(checkpoints: list[Path], work: Path, onnx: Path, *, imgsz: int) -> int:
    """The detector step of ``--soup``: average the checkpoints and ship the mean as ``onnx``."""
    from .pipeline import ship_detector
    from .soup import soup_detector

    weights = soup_detector(checkpoints, work / "detector" / "soup.pt")
    ship_detector(weights, onnx, imgsz=imgsz)
    print(f"detector -> {onnx}")
    return 0
