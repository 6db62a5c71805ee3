"""README's examples run as shown: the Python blocks of *Scoring and strategy* and *Reading
dice* (each name they import used), the fields their comments name, and the strategy tables
against what the advisor says (`dicecam strategy/advise --json`)."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from service.cli import main

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SAMPLES = REPO / "datasets" / "samples"


def readme_section(title: str) -> str:
    """The text of README's ``## title`` section."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def python_blocks(title: str) -> list[str]:
    """The fenced ``python`` blocks of README's ``## title`` section."""
    return re.findall(r"^```python\n(.*?)^```", readme_section(title), re.M | re.S)


def run_block(block: str, where: str) -> None:
    """Run a README example, each name it imports used in it."""
    tree = ast.parse(block)
    imported = {
        a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert imported <= used, f"README.md ({where}) imports {', '.join(imported - used)} unused"
    exec(compile(tree, f"README.md ({where})", "exec"), {"__name__": "readme"})


def cells(section: str, header: str) -> list[list[str]]:
    """The rows of the table of ``section`` whose header row starts with ``header``."""
    lines = section[section.index(f"| {header} |") :].split("\n")[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("*") for c in line.strip("|").split("|")])
    return rows


def json_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_readme_scoring_example_runs_as_shown(capsys: pytest.CaptureFixture[str]) -> None:
    from scoring import Keep, Option

    [block] = python_blocks("Scoring and strategy")
    run_block(block, "Scoring and strategy")
    # its comments name the fields of what the calls return
    for cls in (Keep, Option):
        named = re.search(rf"{cls.__name__}[:(] ?([a-z_]+(?:, [a-z_]+)*)", block)
        assert named, f"the example names no fields of {cls.__name__}"
        assert named.group(1).split(", ") == [f.name for f in dataclasses.fields(cls)]
    # the dicecam commands below it print what their comments say
    score = json_of(
        ["score", "--game", "morning-roll", "--json", "1", "1", "1", "5", "2", "3"], capsys
    )
    assert {"bust", "max_points", "keeps"} <= score.keys()


def test_the_readme_names_the_games_each_scoring_command_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """README said `--game` was "one of the five" for advise and strategy too, which refuse
    Solitaire Dice and Low-High."""
    from scoring import GAME_NAMES

    prose = " ".join(readme_section("Scoring and strategy").split())
    said = re.search(
        r"`--game` is one of the (\w+) for `score`, of the Farkle family \(([^)]*)\)", prose
    )
    assert said, "README no longer says which games score, advise and strategy take"
    family = re.findall(r"`([a-z-]+)`", said.group(2))
    for command, named in [("score", list(GAME_NAMES)), ("advise", family), ("strategy", family)]:
        dice = [] if command == "strategy" else ["5", "1", "2", "4", "6"]
        takes = [g for g in GAME_NAMES if main([command, "--game", g, *dice]) == 0]
        capsys.readouterr()
        assert takes == named, command
    assert said.group(1) == "five" and len(GAME_NAMES) == 5


def test_the_readme_strategy_tables_are_what_the_advisor_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    section = readme_section("Scoring and strategy")
    for game, expected, thresholds in cells(section, "game"):
        strategy = json_of(["strategy", "--json", "--game", game], capsys)
        assert f"{strategy['expected_turn_score']:.2f}" == expected.split()[0], game
        banks = [int(t.split()[0]) for t in thresholds.split(" / ")]
        assert list(strategy["bank_thresholds"].values()) == banks, game
    for kept, both, one, best in cells(section, "kept before"):
        options = json_of(["advise", "--json", "--banked", kept, "5", "1", "2"], capsys)["options"]
        rolls = {tuple(o["keep"]): o["expected"] for o in options if o["then"] == "roll"}
        assert (f"{rolls[(1, 5)]:.2f}", f"{rolls[(1,)]:.2f}") == (both, one), kept
        top = options[0]
        if top["then"] == "roll":
            shown = "keep 1+5 and roll one die"
        else:
            shown = f"bank {int(kept) + top['points']}"
        assert top["keep"] == [1, 5] and best.startswith(shown), kept


def test_the_readme_reading_example_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [block] = python_blocks("Reading dice")
    truth = json.loads((SAMPLES / "truth.json").read_text())
    photo = "roll-s21-035.jpg"  # 1 2 5 6: scores, not a bust
    for name in ("roll.jpg", "a.jpg", "b.jpg"):
        shutil.copy(SAMPLES / photo, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DICECAM_BACKEND", "onnxruntime")  # reads the same; OpenVINO builds slower
    run_block(block, "Reading dice")
    values, bust = capsys.readouterr().out.rsplit("]", 1)
    assert sorted(json.loads(values + "]")) == sorted(truth[photo]["values"])
    assert bust.strip() == "False"


def test_the_readme_names_every_field_of_a_json_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """README's account of `dicecam read --json` names each field a line holds, and no other."""
    prose = " ".join(readme_section("Reading dice").split())
    said = re.search(
        r"Each line of `--json` holds (.*?) a photo that cannot be read gives (`.*?`)", prose
    )
    assert said, "README no longer says what a line of `dicecam read --json` holds"
    named = set(re.findall(r"`([a-z_]+)`", said.group(1)))
    monkeypatch.setenv("DICECAM_BACKEND", "onnxruntime")
    (tmp_path / "notes.jpg").write_text("not a photo")
    photos = [str(SAMPLES / "roll-s21-035.jpg"), str(tmp_path / "notes.jpg")]
    assert main(["read", "--json", *photos]) == 1
    reading, unreadable = map(json.loads, capsys.readouterr().out.splitlines())
    fields = set(reading) | {key for die in reading["dice"] for key in die}
    assert named == fields
    assert said.group(2) == "`{" + ", ".join(f'"{k}"' for k in unreadable) + "}`"
