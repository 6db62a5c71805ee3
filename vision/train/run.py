"""``dicecam train`` without ``--from``: the shipped reader from its recipe, step by step."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections import Counter
from pathlib import Path

from vision.atomic import atomic_copy, atomic_write

from .pipeline import Prepared
from .publish import model_set_files
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
    to int8, calibrated on crops of the dice of ``train_dirs``. Photos that cannot be read are
    said (:func:`~.crops.say_unreadable`)."""
    from .classifier import export_classifier, load_classifier
    from .crops import load_crops, say_unreadable
    from .quantize import CALIBRATION_CROPS, quantize_classifier

    weights = faces.with_suffix(".pt")
    unreadable: list[Path] = []
    crops, _ = load_crops(train_dirs, jitter=0, unreadable=unreadable)
    say_unreadable(unreadable, f"{faces.name} calibration")  # their dice are left out
    export_classifier(load_classifier(weights), faces)
    quantize_classifier(faces, crops)
    used = min(CALIBRATION_CROPS, len(crops))
    print(f"face classifier -> {faces} (int8, calibrated on {used} of {len(crops)} die crops)")
    return faces


def train_reader(recipe: Recipe, args: argparse.Namespace) -> int:
    """Make the model of ``recipe`` in ``args.out``: the steps of ``args.stage`` (``all``:
    every one). A whole run makes the set in the work folder and puts it into ``--out`` in one
    step (:func:`vision.train.publish.publish`); a step run alone writes into ``--out``, and a
    KeyboardInterrupt or OSError (a full disk) it stops on says which files there are new."""
    from .pipeline import prepare_data
    from .publish import publish, said

    name = args.name or recipe.name
    out = (args.out or REPO / "models").resolve()
    work = args.work.resolve()
    stage = args.stage
    soup = getattr(args, "soup", None)
    faces_pt = out / f"{name}-faces.pt"
    if stage == "int8" and not faces_pt.is_file():  # before rendering any data
        raise FileNotFoundError(
            f"expected the face classifier's float weights at {faces_pt}: the int8 build is "
            "made from them (train them with --stage faces)"
        )
    if stage == "card" and not (out / f"{name}.onnx").is_file():  # before rendering any data
        raise FileNotFoundError(
            f"expected the model at {out / f'{name}.onnx'}: --stage card measures it and writes "
            "its card (make it with --stage detector and --stage faces, or with no --stage)"
        )
    if stage != "all":
        before = _model_state(out, name)
        try:
            if soup and stage == "detector":  # averaging needs no data
                return _ship_soup(soup, work, out / f"{name}.onnx", imgsz=recipe.detector.imgsz)
            prepared = prepare_data(recipe, work, extra=args.data, workers=args.workers)
            if stage == "data":
                print(f"data ready: {prepared.data_yaml}")
            elif stage == "int8":
                _quantize_faces(out / f"{name}-faces.onnx", prepared.train_dirs)
            else:
                _steps(recipe, args, prepared, out, name)
        except (KeyboardInterrupt, OSError) as exc:
            raise said(exc, _what_changed(out, name, before)) from exc
        return 0
    made = work / "model"  # the whole set, put into --out at the end
    try:
        shutil.rmtree(made, ignore_errors=True)  # what a stopped run had made
        made.mkdir(parents=True)
        for earlier in model_set_files(out, name):  # the models the recipe does not train
            if earlier.name.startswith((f"{name}-cocked.", f"{name}-verify.")):
                atomic_copy(earlier, made / earlier.name)
        prepared = prepare_data(recipe, work, extra=args.data, workers=args.workers)
        _steps(recipe, args, prepared, made, name)
    except (KeyboardInterrupt, OSError) as exc:
        note = f"{out} left as it was (no model of this run there); the same command starts again"
        raise said(exc, note) from exc
    files = publish(made, out, name)  # says itself what it left
    print(f"model -> {out / f'{name}.onnx'} ({', '.join(f.name for f in files)})")
    return 0


def _model_state(out: Path, name: str) -> dict[str, tuple[int, int, int]]:
    """The files of model ``name`` in ``out``, each by its inode, size and change time (every
    file of a model is written whole, as a new file put in place)."""
    stats = {f.name: f.stat() for f in model_set_files(out, name)}
    return {f: (st.st_ino, st.st_size, st.st_mtime_ns) for f, st in stats.items()}


def _what_changed(out: Path, name: str, before: dict[str, tuple[int, int, int]]) -> str:
    """What a step stopped part way left in ``out``: the files of ``name`` it wrote, and those of
    an earlier run beside them, which the reader would load together."""
    after = _model_state(out, name)
    new = sorted(f for f, state in after.items() if before.get(f) != state)
    if not new:
        return f"{out} left as it was (no file of this run there)"
    earlier = sorted(f for f in after if f not in new)
    return (
        f"new in {out}: {', '.join(new)}; earlier there: {', '.join(earlier) or 'none'} "
        "(the reader loads them together: run the step again)"
    )


def _steps(
    recipe: Recipe, args: argparse.Namespace, prepared: Prepared, dest: Path, name: str
) -> None:
    """The detector, face classifier and card steps of ``args.stage``, written into ``dest``."""
    from .card import write_card
    from .detector import train_detector
    from .pipeline import ship_detector, train_faces

    stage = args.stage
    soup = getattr(args, "soup", None)
    onnx = dest / f"{name}.onnx"
    faces = dest / f"{name}-faces.onnx"
    if stage == "all" and soup:
        _ship_soup(soup, args.work.resolve(), onnx, imgsz=recipe.detector.imgsz)
    elif stage in ("all", "detector"):
        d = recipe.detector
        weights = train_detector(
            prepared.data_yaml,
            args.work.resolve() / "detector",
            model=d.model_path(),
            cache=d.cache,
            imgsz=d.imgsz,
            epochs=d.epochs,
            batch=d.batch,
            seed=args.seed,
            augment=d.augment,
            time_hours=d.time_hours,
            single_cls=d.single_cls,
            device=getattr(args, "device", "cpu"),
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
            device=getattr(args, "device", "cpu"),
        )
        print(f"face classifier -> {faces}")
    if stage in ("all", "card"):
        evaluations = {}
        if prepared.synth_dir is not None and _has_val_photos(prepared.synth_dir):
            evaluations["synthetic val"] = evaluate_model(onnx, prepared.synth_dir, split="val")
        elif prepared.synth_dir is not None:  # a few photos at the recipe's val_fraction: none
            print(
                f"synthetic val: no photo in {prepared.synth_dir / 'images' / 'val'}, not measured"
            )
        test = synth_test_set(recipe, args.work.resolve())
        if test is not None:
            evaluations[f"synthetic test (seed {recipe.test.seed}, held out)"] = evaluate_model(
                onnx, test, split="train"
            )
        evaluations["roboflow-dice eval (real)"] = evaluate_model(
            onnx, ROBOFLOW_EVAL, all_on_table=True
        )
        card = write_card(
            dest / f"{name}.md",
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


def _has_val_photos(dataset: Path) -> bool:
    """Whether the evaluation finds a photo in ``dataset``'s val split (by its own rule)."""
    from vision.yolo_dataset import DatasetError, find_images

    try:
        return bool(find_images(dataset, "val")[0])
    except DatasetError:
        return False


def _ship_soup(checkpoints: list[Path], work: Path, onnx: Path, *, imgsz: int) -> int:
    """The detector step of ``--soup``: average the checkpoints and ship the mean as ``onnx``."""
    from .pipeline import ship_detector
    from .soup import soup_detector

    weights = soup_detector(checkpoints, work / "detector" / "soup.pt")
    ship_detector(weights, onnx, imgsz=imgsz)
    print(f"detector -> {onnx}")
    return 0
