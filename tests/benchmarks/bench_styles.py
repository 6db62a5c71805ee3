"""How the shipped reader reads dice styles it never trained on, on the very same scenes.

    python tests/benchmarks/bench_styles.py [--n 30] [--model models/dicecam-reader.onnx]
        [--work /tmp/dicecam-bench-styles] [--style NAME ...]

Renders ``--n`` scenes at rest (no die in the air, no camera shake) once per dice style: the
same tables, cameras, lights and throws, only the dice differ. ``white`` (white dice, black
pips) lies inside the generator's range and is the baseline; the others fall outside it (the
fine-tuning benchmark's styles, and a few more: small pips, pale dice with white pips, dark dice
with coloured pips, grey on grey). For each style it prints the reader's die recall, face
accuracy and exact photos, and the face classifier alone at the true boxes of the dice (cocked
ones left out). A style read far worse than ``white`` is one the reader does not generalise to.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

from bench_finetune import render_set, true_box_faces  # noqa: E402
from dice_styles import STYLES  # noqa: E402

from vision import DiceReader, ModelError  # noqa: E402
from vision.evaluate import evaluate_dataset  # noqa: E402
from vision.faces import faces_model_for  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="scenes per style (default 30)")
    ap.add_argument("--model", type=Path, default=REPO / "models" / "dicecam-reader.onnx")
    ap.add_argument(
        "--work", type=Path, default=None, help="where to render (default: a temp dir, removed)"
    )
    ap.add_argument("--style", nargs="+", default=None, help="styles to read (default: all)")
    ap.add_argument("--seed", type=int, default=4242)
    a = ap.parse_args()
    styles = STYLES
    names = a.style or list(styles)
    unknown = [s for s in names if s not in styles]
    if unknown:
        ap.error(f"unknown style {unknown[0]!r}; expected one of {', '.join(styles)}")
    try:
        reader = DiceReader(a.model)
    except ModelError as exc:
        print(f"bench_styles: {exc}", file=sys.stderr)
        return 2
    faces = faces_model_for(a.model)
    with tempfile.TemporaryDirectory(prefix="dicecam-bench-styles-") as tmp:
        work = a.work or Path(tmp)
        print(f"{a.n} scenes at rest per style (seed {a.seed}), reader {a.model}, in {work}")
        print(f"{'style':<14} {'dice':>5} {'recall':>8} {'face':>8} {'exact':>7}   true boxes")
        for name in names:
            out = work / name
            shutil.rmtree(out, ignore_errors=True)  # a --work of a larger --n held more photos
            render_set(out, a.n, styles[name], a.seed, at_rest=True)
            f = evaluate_dataset(out, reader=reader, split="").to_dict()
            right, total = true_box_faces(faces, out)["all"]
            print(
                f"{name:<14} {f['truth_dice']:>5} {f['recall']:>8.2%} {f['face_accuracy']:>8.2%} "
                f"{f['exact_accuracy']:>7.2%}   {right}/{total} ({right / max(total, 1):.2%})",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
