"""Join outline models: one ONNX file whose grid is the mean of its members' grids.

Two runs of one training command, differing only in their seed, disagree on many photos (the
surface card has the figures); the mean of their grids is surer only where they agree. The joined
file has the members' input, output and metadata, so :class:`vision.table.SurfaceModel` runs it
as it runs one model (for the members' time together).

    python -m vision.train.surface_join --out models/dicecam-surface.onnx \
        runs/surf-a/dicecam-surface.onnx runs/surf-c/dicecam-surface.onnx
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.atomic import replacing

__all__ = ["MUST_AGREE", "join_surface_models", "main"]

MUST_AGREE = ("task", "imgsz", "stride", "layers", "min_certainty", "dice")
"""Metadata the members must share: the runtime reads it from the joined file."""


def _metadata(model: Any) -> dict[str, str]:
    return {p.key: p.value for p in model.metadata_props}


def join_surface_models(members: Sequence[str | Path], out: str | Path) -> Path:
    """Write to ``out`` one outline model whose ``surface`` output is the mean of ``members``'.

    The members must be outline models (``task`` dicecam-surface) with the same input, grid and
    layers; the joined file keeps the first member's metadata, with ``members`` naming each
    member's file and ``val_mean_iou`` each member's (comma-separated).

    Example:
        >>> join_surface_models(["a.onnx", "b.onnx"], "joined.onnx")  # doctest: +SKIP
        PosixPath('joined.onnx')
    """
    import onnx
    from onnx import compose, helper

    if len(members) < 2:
        raise ValueError(f"expected at least two outline models to join, got {len(members)}")
    models = []
    for path in members:
        try:
            model = onnx.load(str(path))
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{path}: expected an outline model (.onnx), found no file"
            ) from None
        except Exception as exc:  # onnx raises DecodeError and others for a file that is not one
            raise ValueError(f"{path}: expected an outline model (.onnx), got {exc}") from None
        meta = _metadata(model)
        if meta.get("task") != "dicecam-surface":
            raise ValueError(
                f"{path}: expected an outline model (metadata task 'dicecam-surface'), "
                f"got task {meta.get('task')!r}"
            )
        models.append(model)
    first = _metadata(models[0])
    for path, model in zip(members[1:], models[1:], strict=True):
        meta = _metadata(model)
        differ = [k for k in MUST_AGREE if meta.get(k) != first.get(k)]
        if differ:
            raise ValueError(
                f"{path}: expected the same {', '.join(differ)} as {members[0]} "
                f"({', '.join(f'{k}={first.get(k)}' for k in differ)}), got "
                f"{', '.join(f'{k}={meta.get(k)}' for k in differ)}"
            )

    g0 = models[0].graph
    image, surface = g0.input[0].name, g0.output[0].name
    nodes, initializers, value_info, outputs = [], [], [], []
    for k, model in enumerate(models):
        graph = compose.add_prefix(model, f"m{k}_").graph
        for node in graph.node:  # every member reads the one shared input
            node.input[:] = [image if name == f"m{k}_{image}" else name for name in node.input]
        nodes += graph.node
        initializers += graph.initializer
        value_info += graph.value_info
        outputs.append(graph.output[0].name)
    initializers.append(
        helper.make_tensor("join_scale", onnx.TensorProto.FLOAT, [], [1.0 / len(models)])
    )
    nodes.append(helper.make_node("Sum", outputs, ["join_sum"]))
    nodes.append(helper.make_node("Mul", ["join_sum", "join_scale"], [surface]))
    graph = helper.make_graph(
        nodes, "dicecam-surface-joined", [g0.input[0]], [g0.output[0]], initializers,
        value_info=value_info,
    )  # fmt: skip
    joined = helper.make_model(graph, opset_imports=models[0].opset_import)
    joined.ir_version = models[0].ir_version
    meta = first | {
        "members": ", ".join(str(p) for p in members),
        "val_mean_iou": ", ".join(_metadata(m).get("val_mean_iou", "?") for m in models),
    }
    for key, value in meta.items():
        entry = joined.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(joined)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(out) as part:
        onnx.save(joined, str(part))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Join outline models: one ONNX file giving the mean of their grids."
    )
    p.add_argument("members", nargs="+", help="outline models (.onnx) to join, two or more")
    p.add_argument("--out", required=True, help="the joined model's path")
    a = p.parse_args(argv)
    try:
        out = join_surface_models(a.members, a.out)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{out}: the mean of {len(a.members)} outline models")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
