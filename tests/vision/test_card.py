"""Model cards: the figures line of each evaluation."""

from __future__ import annotations

import json
from pathlib import Path

from vision.train.card import write_card


def _card(path: Path, **changes) -> Path:
    """A card of a model "m" written to ``path``, with ``changes`` to the arguments."""
    args = dict(
        name="m",
        summary="A model.",
        data=["Synthetic: 10 photos."],
        command="dicecam train",
        recipe={"epochs": 1},
        evaluations={},
    )
    return write_card(path, **(args | changes))


def test_card_lists_the_figures_it_was_given(tmp_path: Path):
    figures = {
        "images": 10,
        "truth_dice": 40,
        "face_accuracy": 0.925,
        "recall": 0.95,
        "precision": None,  # not measured: left out
        "exact_accuracy": 0.5,
        "clear_dice": {
            "dice": 30,
            "found": 29,
            "read_right": 28,
            "face_accuracy": 28 / 29,
            "recall": 29 / 30,
        },
        "silent_errors": 2,
        "photos_to_check": 4,
        "table": {"recall": 0.25, "bust_recall": 0.5, "false_bust_rate": 0.1},
    }
    card = _card(tmp_path / "m.md", evaluations={"synthetic test": figures, "real": None})
    text = card.read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("- synthetic test")]
    assert line == (
        "- synthetic test (10 photos, 40 dice): face accuracy (matched dice) 92.50%; die recall "
        "95.00%; whole-photo exact 50.00%; clear dice (at rest, in view, sharp: 30): face "
        "accuracy 96.55%, recall 96.67%; silent errors (read wrong, nothing marked to check) "
        "2/10, photos asking for a check 4; off-table recall 25.00%; busts caught 50.00%; false "
        "busts 10.00%"
    )
    assert "- real: not measured" in text
    assert json.loads(card.with_suffix(".json").read_text())["evaluations"]["real"] is None


def test_card_puts_the_overview_before_the_data_and_extra_sections_last(tmp_path: Path):
    card = _card(
        tmp_path / "m.md",
        overview="## At a glance\nToday's figures.\n",
        extra="## Speed\n1.5 ms.\n",
    )
    text = card.read_text()
    assert text.startswith("# m\n\nA model.\n\nWritten ")
    assert "\n\n## At a glance\nToday's figures.\n\n## Data\n" in text
    assert text.endswith("## Speed\n1.5 ms.\n")
    plain = _card(tmp_path / "p.md").read_text()
    assert "At a glance" not in plain and plain.startswith("# m\n\nA model.\n\nWritten ")
