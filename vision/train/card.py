"""Model cards: what a shipped model was trained on, how to reproduce it, how well it reads."""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vision.atomic import atomic_write

__all__ = ["write_card"]

ATTRIBUTION = (
    'Real photos: Roboflow public "6-sided dice" dataset (Dice v3 export), CC BY 4.0, '
    "train split only; its eval split was used for reported figures only."
)


def _figures(name: str, figures: dict[str, Any] | None) -> list[str]:
    if not figures:
        return [f"- {name}: not measured"]
    keys = [
        ("face_accuracy", "face accuracy (matched dice)"),
        ("recall", "die recall"),
        ("precision", "die precision"),
        ("exact_accuracy", "whole-photo exact"),
        ("cocked_recall", "cocked recall (flagged cocked)"),
        ("median_latency_ms", "median latency (ms)"),
    ]
    parts = []
    for key, label in keys:
        v = figures.get(key)
        if v is None:
            continue
        parts.append(f"{label} {v:.1f}" if key.endswith("_ms") else f"{label} {100 * v:.2f}%")
    clear = figures.get("clear_dice")
    if clear and clear.get("face_accuracy") is not None:
        parts.append(
            f"clear dice (at rest, in view, sharp: {clear['dice']}): face accuracy "
            f"{100 * clear['face_accuracy']:.2f}%, recall {100 * clear['recall']:.2f}%"
        )
    silent, images = figures.get("silent_errors"), figures.get("images")
    if silent is not None and images:
        parts.append(
            f"silent errors (read wrong, nothing marked to check) {silent}/{images}, "
            f"photos asking for a check {figures.get('photos_to_check')}"
        )
    table = figures.get("table")
    if table:
        for key, label in (
            ("recall", "off-table recall"),
            ("bust_recall", "busts caught"),
            ("false_bust_rate", "false busts"),
        ):
            if table.get(key) is not None:
                parts.append(f"{label} {100 * table[key]:.2f}%")
    return [
        f"- {name} ({figures.get('images')} photos, {figures.get('truth_dice')} dice): "
        + "; ".join(parts)
    ]


def write_card(
    path: Path,
    *,
    name: str,
    summary: str,
    data: list[str],
    command: str,
    recipe: dict[str, Any],
    evaluations: dict[str, dict[str, Any] | None],
    notes: list[str] | None = None,
    extra: str | None = None,
    overview: str | None = None,
) -> Path:
    """Write a Markdown model card (and its figures as JSON beside it); ``overview`` Markdown
    (the card at a glance) goes before the data, ``extra`` Markdown (hand-written
    sections) at the end."""
    path = Path(path)
    lines = [
        f"# {name}",
        "",
        summary,
        "",
        f"Written {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on {platform.machine()} "
        f"({platform.python_version()}).",
        "",
        *([overview.strip(), ""] if overview else []),
        "## Data",
        *[f"- {d}" for d in data],
        f"- {ATTRIBUTION}",
        "",
        "## Reproduce",
        "```bash",
        command,
        "```",
        "",
        "## Recipe",
        "```json",
        json.dumps(recipe, indent=2, default=str),
        "```",
        "",
        "## Measured",
        "Command: `dicecam eval DATASET --model MODEL` (matching by box centre).",
        *[line for k, v in evaluations.items() for line in _figures(k, v)],
    ]
    if notes:
        lines += ["", "## Notes", *[f"- {n}" for n in notes]]
    if extra:
        lines += ["", extra.strip()]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "\n".join(lines) + "\n")  # a killed write keeps the old card
    atomic_write(
        path.with_suffix(".json"), json.dumps({"name": name, "evaluations": evaluations}, indent=2)
    )
    return path
