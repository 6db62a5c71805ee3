"""Make the shipped reader end to end: synthetic data, detector, face classifier, ONNX, card.

Each step can run on its own (the CLI exposes them) so a long run can be resumed:
:func:`prepare_data` renders the synthetic set (once) and writes a merged ``data.yaml``;
:func:`train_faces` trains the crop classifier; :func:`ship` exports and copies the models
into ``models/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vision.atomic import atomic_copy, atomic_write

from .recipe import Recipe

__all__ = ["Prepared", "prepare_data", "ship_detector", "train_faces"]

NAMES = {0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "cocked"}


@dataclass(slots=True)
class Prepared:
    data_yaml: Path
    train_dirs: list[Path]
    val_dirs: list[Path]
    synth_dir: Path | None


def prepare_data(
    recipe: Recipe, work_dir: Path, *, extra: list[Path] | None = None, workers: int = 1, log=print
) -> Prepared:
    """Render the recipe's synthetic set under ``work_dir`` (if not there yet) and write a
    ``data.yaml`` that trains on synthetic + real photos and validates on synthetic val.

    ``extra`` adds YOLO image folders to the training set (a new dice set to fine-tune on).
    """
    import yaml

    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    train_dirs: list[Path] = []
    val_dirs: list[Path] = []
    synth_dir: Path | None = None
    if recipe.synth.n > 0:
        from vision.synth import write_dataset

        synth_dir = work_dir / f"synth-{recipe.synth.seed}-{recipe.synth.n}"
        done = synth_dir / "DONE"
        if not done.is_file():
            log(f"rendering {recipe.synth.n} synthetic images into {synth_dir}")
            write_dataset(
                synth_dir,
                recipe.synth.n,
                seed=recipe.synth.seed,
                workers=workers,
                val_fraction=recipe.synth.val_fraction,
                size=tuple(recipe.synth.size),
            )
            atomic_write(done, "ok\n")  # a full disk names it
        train_dirs.append(synth_dir / "images" / "train")
        val_dirs.append(synth_dir / "images" / "val")
    real = recipe.real_dirs()
    if recipe.real and not real:
        log("warning: no real photo folder of the recipe exists here; training on synthetic only")
    train_dirs += real
    train_dirs += [Path(p).resolve() for p in extra or []]
    if not val_dirs:
        val_dirs = train_dirs[:1]
    if not train_dirs:
        raise ValueError(
            "nothing to train on: the recipe has no synthetic images and no real folder"
        )
    data_yaml = work_dir / "data.yaml"
    atomic_write(  # UTF-8 and \n line ends on every platform
        data_yaml,
        yaml.safe_dump(
            {
                "train": [str(p) for p in train_dirs],
                "val": [str(p) for p in val_dirs],
                "names": NAMES,
            },
            sort_keys=False,
        ),
    )
    return Prepared(data_yaml, train_dirs, val_dirs, synth_dir)


def train_faces(
    recipe: Recipe,
    train_dirs: list[Path],
    out_onnx: Path,
    *,
    init: Path | None = None,
    val_dirs: list[Path] | None = None,
    replay_dirs: list[Path] | None = None,
    replay_share: float = 0.6,
    threads: int | None = None,
    seed: int = 0,
    join: list[Path] | None = None,
    tune_last: bool = False,
    device: str = "cpu",
    log=print,
) -> Path:
    """Train the face classifier on crops of every labelled die and export it to ONNX.

    ``replay_dirs``: dice the model already reads (fine-tuning), mixed in so it does not forget
    them; the ``train_dirs`` crops are repeated until the replay crops are about
    ``replay_share`` of each epoch (0: none). ``join``: classifiers (``.pt``) the trained one is
    joined with (:func:`vision.train.classifier.join_classifiers`: the mean of their
    probabilities is what is exported). ``tune_last``: starting from a joined model, train its
    last member only.
    ``device``: where it trains, ``"cpu"`` or a CUDA GPU by its number (``"0"``).
    The torch weights are saved beside the ONNX file (``.pt``) so it can be fine-tuned later;
    the ONNX file is quantized to int8 when the recipe says so (``faces.int8``, the default),
    calibrated on the training crops.
    """
    import numpy as np

    from .classifier import (
        export_classifier,
        join_classifiers,
        load_classifier,
        save_classifier,
        train_classifier,
    )
    from .crops import load_crops, say_unreadable

    unreadable: list[Path] = []
    x, y = load_crops(train_dirs, jitter=recipe.faces.jitter, unreadable=unreadable)
    log(f"face classifier: {len(x)} crops from {len(train_dirs)} folders")
    if replay_dirs and not 0.0 <= replay_share < 1.0:
        raise ValueError(f"expected 0 <= replay_share < 1, got {replay_share}")
    if replay_dirs and len(x) and replay_share > 0:  # a share of 0: no replay crops
        rx, ry = load_crops(replay_dirs, jitter=0, unreadable=unreadable)
        repeat = max(1, round(len(rx) * (1 - replay_share) / (replay_share * len(x))))
        x = np.concatenate([np.tile(x, (repeat, 1, 1, 1)), rx])
        y = np.concatenate([np.tile(y, repeat), ry])
        log(f"face classifier: + {len(rx)} replay crops, new crops repeated {repeat}x")
    val = load_crops(val_dirs, jitter=0, unreadable=unreadable) if val_dirs else None
    say_unreadable(unreadable, "face classifier", log)  # their dice are left out
    model = train_classifier(
        x,
        y,
        epochs=recipe.faces.epochs,
        batch=recipe.faces.batch,
        lr=recipe.faces.lr,
        init=init,
        val=val,
        threads=threads,
        width=recipe.faces.width,
        seed=seed,
        tune_last=tune_last,
        blur=recipe.faces.blur,
        device=device,
        log=log,
    )
    if join:
        model = join_classifiers([*(load_classifier(Path(p)) for p in join), model])
        log(f"face classifier: joined with {', '.join(map(str, join))}")
    out_onnx = Path(out_onnx)
    export_classifier(model, out_onnx)
    if recipe.faces.int8 and len(x):
        from .quantize import quantize_classifier

        quantize_classifier(out_onnx, x)
        log(f"face classifier: quantized to int8 ({out_onnx.name})")
    save_classifier(model, out_onnx.with_suffix(".pt"))
    return out_onnx


def ship_detector(weights: Path, out_onnx: Path, *, imgsz: int) -> Path:
    """Export detector weights to ``out_onnx`` and keep the checkpoint beside it (``.pt``)."""
    from .detector import export_onnx

    out_onnx = Path(out_onnx)
    export_onnx(weights, out_onnx, imgsz=imgsz)
    atomic_copy(weights, out_onnx.with_suffix(".pt"))
    return out_onnx
