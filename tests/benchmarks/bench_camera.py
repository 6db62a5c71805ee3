"""How the reader copes with other cameras and light: the real eval photos, changed as cameras do.

    python tests/benchmarks/bench_camera.py [--real ../shared/datasets/roboflow-dice/eval]
        [--model models/dicecam-reader.onnx] [--change NAME ...] [--work DIR]

Each change turns every photo of the real eval set into one a dimmer, brighter, greyer or worse
camera would have taken (a morning kitchen, a cheap webcam, a black-and-white security camera),
saves it as a JPEG (quality 90) beside the set's own labels, and reads it with the whole reader
(``dicecam eval --all-on-table``): face accuracy, die recall and precision, exact photos and
false busts (no die of the set left its table, so every bust is a false one). ``none`` is the
photos saved again unchanged, the baseline of the others. A change that costs far more than
``none`` is a camera the reader does not generalise to; a change that busts clean rolls costs
a player a turn.

``DICECAM_SURFACE_MODEL`` (and the other ``DICECAM_`` settings) choose the models as for
``dicecam eval``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from vision import DiceReader, ModelError  # noqa: E402
from vision.evaluate import evaluate_dataset  # noqa: E402


def _scale(gain: float | tuple[float, float, float], bias: float = 0.0) -> Callable:
    g = np.asarray(gain, np.float32)
    return lambda bgr: np.clip(bgr.astype(np.float32) * g + bias, 0, 255).astype(np.uint8)


def _contrast(k: float) -> Callable:
    return lambda bgr: np.clip((bgr.astype(np.float32) - 128) * k + 128, 0, 255).astype(np.uint8)


def _noise(sigma: float) -> Callable:
    def change(bgr: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(int(bgr.sum()) % 2**32)  # the same noise every run
        return np.clip(bgr + rng.normal(0, sigma, bgr.shape), 0, 255).astype(np.uint8)

    return change


def _jpeg(quality: int) -> Callable:
    def change(bgr: np.ndarray) -> np.ndarray:
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)

    return change


def _grey(bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


CHANGES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "none": lambda bgr: bgr,
    "dim": _scale(0.45),  # a morning kitchen
    "bright": _scale(1.5, 20),  # an overexposed phone
    "low-contrast": _contrast(0.5),  # haze, a cheap webcam
    "warm": _scale((0.7, 0.95, 1.25)),  # tungsten light (gains in B, G, R order)
    "cool": _scale((1.25, 1.0, 0.75)),  # shade, daylight through a window
    "blur": lambda bgr: cv2.GaussianBlur(bgr, (0, 0), 1.5),  # out of focus
    "noise": _noise(12),  # a small sensor in low light
    "jpeg-20": _jpeg(20),  # a stream compressed hard
    "grey": _grey,  # a black-and-white camera
}
"""The changes, each a function of a BGR photo."""


def changed_set(real: Path, out: Path, change: Callable[[np.ndarray], np.ndarray]) -> Path:
    """A copy of the YOLO folder ``real`` (images/, labels/) with every photo changed."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(real / "labels", out / "labels")
    (out / "images").mkdir(parents=True)
    for photo in sorted((real / "images").iterdir()):
        bgr = cv2.imread(str(photo), cv2.IMREAD_COLOR)
        if bgr is None:
            continue
        cv2.imwrite(
            str(out / "images" / f"{photo.stem}.jpg"), change(bgr), [cv2.IMWRITE_JPEG_QUALITY, 90]
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", type=Path, default=REPO.parent / "shared/datasets/roboflow-dice/eval")
    ap.add_argument("--model", type=Path, default=None, help="default: DICECAM_MODEL or shipped")
    ap.add_argument("--change", nargs="+", choices=list(CHANGES), default=list(CHANGES))
    ap.add_argument("--work", type=Path, default=None, help="where to write (default: temp)")
    a = ap.parse_args()
    if not (a.real / "images").is_dir() or not (a.real / "labels").is_dir():
        print(f"no real eval set at {a.real} (images/ and labels/): nothing to read")
        return 1
    try:
        reader = DiceReader(a.model)
    except ModelError as exc:
        print(f"bench_camera: {exc}", file=sys.stderr)
        return 2
    print(f"model {reader.model_path}; table step {reader.table!r}")
    print(
        f"{'change':13s} {'face':>7s} {'recall':>7s} {'prec.':>7s} {'exact':>8s} {'false busts':>12s}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        for name in a.change:
            folder = changed_set(a.real, work / name, CHANGES[name])
            r = evaluate_dataset(folder, reader=reader, split="val", all_on_table=True)
            face = r.face_correct / max(1, r.face_matched)
            recall, precision = (
                r.matched / max(1, r.truth_dice),
                r.matched / max(1, r.predicted_dice),
            )
            print(
                f"{name:13s} {face:7.2%} {recall:7.2%} {precision:7.2%} "
                f"{r.exact_images:>4d}/{r.images:<3d} {r.table.false_busts:>6d}/{r.table.clean_images}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
