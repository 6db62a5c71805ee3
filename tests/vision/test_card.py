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


def test_a_figure_of_zero_is_said_and_a_latency_is_in_milliseconds(tmp_path: Path):
    """No silent errors and no false busts are results worth saying, not figures left out."""
    figures = {
        "images": 5,
        "truth_dice": 10,
        "face_accuracy": 1.0,
        "recall": 1.0,
        "precision": None,
        "exact_accuracy": 0.0,
        "median_latency_ms": 12.345,
        "clear_dice": {"dice": 0, "face_accuracy": None},  # no clear die: no clear-dice part
        "silent_errors": 0,
        "photos_to_check": 0,
        "table": {"recall": None, "bust_recall": 0.0, "false_bust_rate": 0.0},
    }
    text = _card(tmp_path / "m.md", evaluations={"t": figures, "empty": {}}).read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("- t ")]
    assert line == (
        "- t (5 photos, 10 dice): face accuracy (matched dice) 100.00%; die recall 100.00%; "
        "whole-photo exact 0.00%; median latency (ms) 12.3; silent errors (read wrong, nothing "
        "marked to check) 0/5, photos asking for a check 0; busts caught 0.00%; false busts 0.00%"
    )
    assert "\n- empty: not measured\n" in text  # measured nothing: not "(None photos, ...)"


def test_a_card_says_its_data_attribution_command_recipe_and_notes(tmp_path: Path):
    card = _card(
        tmp_path / "new" / "folder" / "m.md",  # made as needed
        data=["New dice: my-dice"],
        command="dicecam train --from m.onnx --data my-dice",
        recipe={"epochs": 3},
        notes=["first note", "second note"],
        evaluations={"held-out": {"images": 2, "truth_dice": 4, "recall": 0.5}},
    )
    text = card.read_text()
    assert "## Data\n- New dice: my-dice\n- Real photos: Roboflow public" in text
    assert "## Reproduce\n```bash\ndicecam train --from m.onnx --data my-dice\n```" in text
    assert '## Recipe\n```json\n{\n  "epochs": 3\n}\n```' in text
    assert text.endswith("\n\n## Notes\n- first note\n- second note\n")
    sidecar = json.loads(card.with_suffix(".json").read_text())
    assert sidecar == {
        "name": "m",
        "evaluations": {"held-out": {"images": 2, "truth_dice": 4, "recall": 0.5}},
    }
