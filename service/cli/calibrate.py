"""``dicecam calibrate``: set a fixed camera's playing-surface boundary once.

    dicecam calibrate roll.jpg                          # propose the learned outline, preview it
    dicecam calibrate roll.jpg --accept                 # ... and store it
    dicecam calibrate roll.jpg --points 40,30 600,25 630,470 10,460 --show check.png
    dicecam calibrate --clear                           # back to the learned outline

The boundary is stored with normalised coordinates in ``DICECAM_CALIBRATION`` (default
``<DICECAM_DATA_DIR>/calibration.json``); the reader then uses it instead of the learned outline.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from service.cli import UsageError, given_path

__all__ = ["parse_points", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="set the playing-surface boundary of a fixed camera",
        description=(
            "Store the boundary polygon of the playing surface (table, tray, box) seen by a fixed "
            "camera; dice outside it are off the table. With no --points, propose the learned "
            "outline of PHOTO and write a preview (store it with --accept)."
        ),
    )
    p.add_argument(
        "photo", nargs="?", metavar="PHOTO", type=given_path, help="a photo from the fixed camera"
    )
    p.add_argument(
        "--points",
        nargs="+",
        metavar="X,Y",
        help="boundary corners in photo pixels, in order around the surface (3 to 64)",
    )
    p.add_argument(
        "--normalised",
        "--normalized",
        action="store_true",
        help="--points are fractions (0..1) of the photo's width and height, not pixels",
    )
    p.add_argument("--accept", action="store_true", help="store the proposed learned outline")
    p.add_argument(
        "--show",
        metavar="OUT.png",
        type=Path,
        help="write the photo with the boundary drawn here (default: PHOTO-calibration.png in "
        "the current folder for a proposal; none when --points or --accept stores a boundary)",
    )
    p.add_argument(
        "--out",
        metavar="PATH",
        type=Path,
        help="calibration file (default: DICECAM_CALIBRATION, else calibration.json in the data "
        "dir, DICECAM_DATA_DIR or ~/.dicecam)",
    )
    p.add_argument(
        "--model",
        metavar="PATH",
        type=given_path,
        help="surface outline model (ONNX) for proposals (default: DICECAM_SURFACE_MODEL, as "
        "the reader, else the shipped one)",
    )
    p.add_argument("--clear", action="store_true", help="remove the stored calibration")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def parse_points(items: list[str]) -> list[tuple[float, float]]:
    """``["40,30", "600,25", ...]`` -> ``[(40.0, 30.0), ...]``.

    Raises:
        UsageError: an item that is not ``X,Y``.
    """
    points = []
    for item in items:
        parts = item.replace(";", ",").split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            points.append((float(parts[0]), float(parts[1])))
        except ValueError:
            raise UsageError(f"expected --points as X,Y pairs (e.g. 40,30), got {item!r}") from None
    return points


def _preview(  # type: ignore[no-untyped-def]
    rgb, outline, path: Path, *, unsure: bool = False
) -> None:
    import cv2
    import numpy as np

    img = np.ascontiguousarray(rgb[..., ::-1])
    h, w = img.shape[:2]
    thick = max(2, round(max(h, w) / 320))
    if outline:
        pts = np.round(np.asarray(outline, np.float64)).astype(np.int32)
        shade = img.copy()
        cv2.fillPoly(shade, [pts], (230, 200, 40))
        img = cv2.addWeighted(img, 0.8, shade, 0.2, 0)
        cv2.polylines(img, [pts], True, (230, 200, 40), thick, cv2.LINE_AA)
        for k, (x, y) in enumerate(pts):
            cv2.circle(img, (int(x), int(y)), thick * 3, (40, 40, 230), -1, cv2.LINE_AA)
            label = f"{k + 1}: {int(x)},{int(y)}"
            org = (int(min(max(x + 6, 2), w - 9 * len(label))), int(min(max(y - 6, 14), h - 4)))
            cv2.putText(
                img,
                label,
                org,
                cv2.FONT_HERSHEY_SIMPLEX,
                0.45 * thick / 2 + 0.2,
                (255, 255, 255),
                thick,
                cv2.LINE_AA,
            )
    else:
        text = (
            "outline unsure: give --points"
            if unsure
            else "no edge seen: the surface fills the frame"
            if outline is None
            else "no surface seen"
        )
        cv2.putText(img, text, (10, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (40, 40, 230), 2)
    from vision.atomic import atomic_write

    try:
        encoded, data = cv2.imencode(path.suffix.lower(), img)
    except cv2.error:
        encoded = False
    if not encoded:
        raise UsageError(f"cannot write the preview {path} (expected a .png or .jpg path)")
    try:  # whole or not at all: a killed run or a full disk keeps the earlier preview
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data.tobytes())
    except OSError as exc:
        raise UsageError(f"cannot write the preview {path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from vision.io import ImageError, load_image
    from vision.table import (
        Calibration,
        CalibrationError,
        SurfaceModel,
        SurfaceModelError,
        TableSettings,
        calibration_path,
        check_polygon,
    )

    target = args.out
    if target is not None and target.is_dir():
        raise UsageError(f"--out must be the calibration file, got a folder: {target}")
    if args.clear:
        if args.photo or args.points or args.accept:
            raise UsageError("expected --clear alone, got it with a photo or points")
        removed = Calibration.clear(target)
        if args.json:
            print(
                json.dumps({"removed": removed, "calibration": str(target or calibration_path())})
            )
        else:
            print("calibration removed" if removed else "no calibration was stored")
        return 0
    if not args.photo:
        taken = next((p for p in args.points or [] if Path(p).is_file()), None)
        if taken is not None:  # `--points 40,30 ... roll.jpg`: nargs="+" took the photo too
            raise UsageError(
                f"expected PHOTO before --points, got it among the points: {taken!r} "
                f"(dicecam calibrate {taken} --points X,Y ...)"
            )
        raise UsageError("expected PHOTO (a photo from the fixed camera), or --clear")
    if args.points and args.accept:
        raise UsageError("expected --points or --accept, not both")
    if args.normalised and not args.points:  # it would be dropped without a word
        raise UsageError("expected --points with --normalised (it says they are fractions)")
    try:
        img = load_image(args.photo)
    except ImageError as exc:
        raise UsageError(str(exc)) from None
    w, h = img.width, img.height

    if args.points:
        pts = parse_points(args.points)
        try:  # the checks of the service's PUT /api/v1/calibration
            if args.normalised:  # fractions: said as given, then as the photo's pixels
                pts = [(x * w, y * h) for x, y in check_polygon(pts)]
            cal = Calibration.from_pixels(pts, w, h, image=str(args.photo))
        except CalibrationError as exc:
            size = f" (photo is {w}x{h} pixels)" if args.normalised else ""
            raise UsageError(f"{exc}{size}") from None
        outline, note, unsure = cal.outline(w, h), None, False
    else:
        settings = TableSettings()  # the outline the reader would draw: its model and gate
        if not args.model and settings.surface_model == "none":
            raise UsageError(
                "no learned outline to propose: DICECAM_SURFACE_MODEL is none; give the "
                "boundary with --points (or --model SURFACE.onnx)"
            )
        try:
            model = SurfaceModel(
                args.model or settings.surface_model, min_certainty=settings.surface_min_certainty
            )
        except SurfaceModelError as exc:
            raise UsageError(f"{exc}; or give the boundary with --points") from None
        found = model.find(img.rgb, (w, h))
        outline, note, unsure = found.outline, found.note, found.unsure
        cal = None
        if outline:
            cal = Calibration.from_pixels(outline, w, h, image=str(args.photo))
        elif args.accept:
            raise UsageError(f"nothing to accept: {note}; give the boundary with --points")

    show = args.show
    if show is None and not args.points and not args.accept:
        show = Path(f"{Path(args.photo).stem}-calibration.png")
    if show is not None:
        _preview(img.rgb, outline, show, unsure=unsure)

    stored = None
    if cal is not None and (args.points or args.accept):
        try:
            stored = cal.save(target)
        except OSError as exc:
            raise UsageError(f"cannot store the calibration: {exc}") from None
    result = {
        "photo": str(args.photo),
        "width": w,
        "height": h,
        "points": [[x, y] for x, y in outline] if outline else outline,
        "stored": str(stored) if stored else None,
        "preview": str(show) if show else None,
        "note": note,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    if stored:
        print(f"calibration stored in {stored} ({len(outline or [])} points)")
    elif outline:
        pts = " ".join(f"{round(x)},{round(y)}" for x, y in outline)
        print(f"proposed boundary ({len(outline)} points): --points {pts}")
        print(f"store it:  dicecam calibrate {args.photo} --accept   (or edit the --points)")
    elif outline is None:
        print(note)
    else:
        print(f"{note}; give the boundary with --points")
    if show:
        print(f"preview: {show}")
    return 0
