"""Benchmark of the table logic: outline time, and off-table figures on true dice.

    python tests/benchmarks/bench_table.py [--synth runs/synth-test7] \
        [--real ../shared/datasets/roboflow-dice/eval] [--limit N] \
        [--model models/dicecam-surface.onnx] [--offtable models/dicecam-offtable.onnx] \
        [--offtable-threshold 0.8] [--min-certainty 0.5]

Prints, for the shipped outline model (``models/dicecam-surface.onnx``) with the off-table die
model (``models/dicecam-offtable.onnx``, when present; ``--offtable none`` leaves it out):
- the time the outline and the die model add to a reading (640x480 photo, 6 dice, one thread);
- on a synthetic set (``dicecam synth --n 200 --seed 7 --size 640 480 --val-fraction 0.99``,
  whose val split of 198 photos is read; its sidecars give each die's state): off-table recall
  and precision and the false-bust rate with every labelled die at its TRUE box (the reader left
  out), with the learned outline and with the true outline (the ceiling of the logic);
- on the real photos (none of their dice is off the table): false busts with the true boxes;
- with ``models/dicecam-reader.onnx`` present, false busts of the full reader on the real photos.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from vision.table import (  # noqa: E402
    DEFAULT_OFFTABLE_MODEL,
    DEFAULT_SURFACE_MODEL,
    OffTableModel,
    SurfaceModel,
    SurfaceModelError,
    TableStage,
    apply_table,
    evaluate_table,
)
from vision.types import Die, Reading  # noqa: E402
from vision.yolo_dataset import find_images, load_labels  # noqa: E402


def _timing(model: SurfaceModel, photos: list[Path], dice: OffTableModel | None) -> None:
    times, apply_times, dice_times = [], [], []
    for path in photos:
        rgb = cv2.imread(str(path))[..., ::-1]
        rgb = np.ascontiguousarray(cv2.resize(rgb, (640, 480), interpolation=cv2.INTER_AREA))
        t0 = time.perf_counter()
        outline = model.outline(rgb)
        times.append((time.perf_counter() - t0) * 1000)
        reading = Reading(
            640, 480, [Die(1, (10 + 40 * k, 200, 40 + 40 * k, 230), 0.9) for k in range(6)]
        )
        t0 = time.perf_counter()
        apply_table(reading, outline)
        apply_times.append((time.perf_counter() - t0) * 1000)
        if dice is not None:
            t0 = time.perf_counter()
            dice.probability(rgb, [d.box for d in reading.dice])
            dice_times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"outline time (640x480, {len(times)} photos, 1 thread): median "
          f"{statistics.median(times):.2f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.2f} ms; "
          f"on-table test of 6 dice {statistics.median(apply_times):.3f} ms")  # fmt: skip
    if dice_times:
        print(f"off-table die model, 6 dice: median {statistics.median(dice_times):.2f} ms")


def _real_false_busts(stage: TableStage, real: Path, limit: int | None) -> None:
    images, names = find_images(real, "val")
    images = images[:limit]
    busts, dice, off = [], 0, 0
    for path in images:
        bgr = cv2.imread(str(path))
        if bgr is None:
            continue
        h, w = bgr.shape[:2]
        item = load_labels(path)
        truth = item.truth(w, h, names)
        reading = Reading(w, h, [Die(t.value or 1, t.box, 1.0) for t in truth])
        stage.apply(reading, np.ascontiguousarray(bgr[..., ::-1]))
        dice += len(truth)
        off += reading.off_table
        if reading.bust:
            busts.append(path.name)
    n = len(images)
    print(f"real photos, true boxes, learned outline: false busts {len(busts)}/{n} "
          f"({100 * len(busts) / max(n, 1):.2f}%), dice called off {off}/{dice}")  # fmt: skip
    if busts:
        print("  false busts:", ", ".join(busts[:10]))


def _real_reader(real: Path, limit: int | None, stage: TableStage) -> None:
    from vision import DiceReader, evaluate_dataset

    reader = DiceReader(table=stage)
    if reader.table is None:
        print("reader: no table step (no surface model and no calibration)")
        return
    result = evaluate_dataset(real, reader=reader, limit=limit, all_on_table=True)
    print(f"real photos, full reader: {result.images} photos")
    print(result.format())
    if result.table.false_bust_images:
        names = [Path(p).name for p in result.table.false_bust_images]
        print("  false busts:", ", ".join(names[:10]))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--synth", type=Path, default=REPO / "runs" / "synth-test7")
    p.add_argument("--real", type=Path, default=REPO.parent / "shared/datasets/roboflow-dice/eval")
    p.add_argument("--model", type=Path, default=DEFAULT_SURFACE_MODEL)
    p.add_argument("--offtable", default=str(DEFAULT_OFFTABLE_MODEL), help="or 'none'")
    p.add_argument("--offtable-threshold", type=float, default=None)
    p.add_argument(
        "--min-certainty", type=float, default=None, help="default: the model's metadata"
    )
    p.add_argument("--limit", type=int, default=None)
    a = p.parse_args()

    try:
        model = SurfaceModel(a.model, threads=1, min_certainty=a.min_certainty)
    except SurfaceModelError as exc:
        print(f"bench_table: {exc}", file=sys.stderr)
        return 2
    dice = None
    if a.offtable != "none" and Path(a.offtable).is_file():
        dice = OffTableModel(a.offtable)
        if a.offtable_threshold is not None:
            dice.threshold = a.offtable_threshold
    stage = TableStage(model, dice_model=dice)
    print(f"model: {a.model} ({a.model.stat().st_size / 1e6:.2f} MB, input {model.imgsz})")
    print(f"outline model: {model!r}\noff-table die model: {dice!r}")
    if a.synth.is_dir():
        photos, _ = find_images(a.synth, "val")
        _timing(model, photos[:100], dice)
    elif (a.real / "images").is_dir():  # the timing needs photos only, not the synthetic labels
        print(f"timing on the real photos ({a.real}): no synthetic set at {a.synth}")
        _timing(model, find_images(a.real, "val")[0][:100], dice)
    if a.synth.is_dir():
        learned = evaluate_table(a.synth, stage, limit=a.limit)
        print(f"\nsynthetic set {a.synth}, true boxes, LEARNED outline:")
        print(learned.format())
        ceiling = evaluate_table(a.synth, None, limit=a.limit)
        print(f"\nsame, TRUE outline (ceiling of the on-table rule):\n{ceiling.format()}")
        c = learned.counts
        still = c.found_off - learned.in_air_found
        resting = c.truth_off - learned.in_air
        if resting:
            print(f"\nresting off-table dice (in-air ones left out): learned recall "
                  f"{100 * still / resting:.2f}% ({still}/{resting})")  # fmt: skip
    else:
        print(f"no synthetic set at {a.synth}: make one with "
              f"`dicecam synth --n 200 --seed 7 --size 640 480 --val-fraction 0.99 "
              f"--out {a.synth}` (its val split is read)")  # fmt: skip
    if (a.real / "images").is_dir():
        print()
        _real_false_busts(stage, a.real, a.limit)
        if (REPO / "models" / "dicecam-reader.onnx").is_file():
            _real_reader(a.real, a.limit, stage)
        else:
            print("models/dicecam-reader.onnx absent: full-reader figures skipped")
    else:
        print(f"real photos not found at {a.real}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
