"""The training recipe YAML: its defaults, what a recipe overrides, the paths it names, and its
mistakes refused in one line naming the key (a misspelled key was ignored: the run trained on
the default in its place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main
from vision.train.recipe import (
    DEFAULT_RECIPE,
    RECIPES_DIR,
    REPO,
    FacesRecipe,
    Recipe,
    load_recipe,
    recipe_path,
)


def _recipe(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_recipe_overrides_what_it_names_and_keeps_every_other_default(tmp_path):
    assert load_recipe(_recipe(tmp_path, "")) == Recipe()  # an empty file: the defaults
    got = load_recipe(_recipe(tmp_path, "name: mine\nfaces: {epochs: 3}\nsynth: {n: 0}\n"))
    assert (got.name, got.faces.epochs, got.synth.n) == ("mine", 3, 0)  # 0: real photos only
    assert got.faces.model_copy(update={"epochs": FacesRecipe().epochs}) == FacesRecipe()
    assert got.detector == Recipe().detector
    assert Recipe().test.seed != Recipe().synth.seed  # the card's test set is never trained on
    assert load_recipe().name == load_recipe(DEFAULT_RECIPE).name == "dicecam-reader"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "detector: {epoch: 3}\n",
            "unknown recipe key detector.epoch: expected one of model, imgsz, epochs, ",
        ),
        ("nmae: mine\n", "unknown recipe key nmae: expected one of name, synth, test, real, "),
        ("faces: {blur: 1.5}\n", "faces.blur: input should be less than or equal to 1, got 1.5"),
        ("synth: {val_fraction: 1}\n", "synth.val_fraction: input should be less than 1, got 1"),
        ("- name\n- mine\n", "expected a mapping of recipe fields, got list"),
    ],
)
def test_a_mistake_in_a_recipe_is_said_in_one_line_naming_its_key(tmp_path, capsys, text, said):
    path = _recipe(tmp_path, text)
    with pytest.raises(ValueError) as caught:
        load_recipe(path)
    assert str(caught.value).startswith(f"{path}: {said}")
    work = tmp_path / "work"
    assert main(["train", "--recipe", str(path), "--work", str(work)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not work.exists()


def test_paths_a_recipe_names_are_found_from_the_repository_wherever_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the repository: relative paths are not from here
    assert recipe_path(tmp_path / "x.yaml") == tmp_path / "x.yaml"
    assert recipe_path("datasets/recipes/yolo11-dice.yaml") == RECIPES_DIR / "yolo11-dice.yaml"
    assert recipe_path("runs/x") == REPO / "runs" / "x"
    card = "datasets/recipes/dicecam-reader-card.md"
    recipe = load_recipe(_recipe(tmp_path, f"card_extra: {card}\ncard_overview: {card}\n"))
    expected = (RECIPES_DIR / "dicecam-reader-card.md").read_text(encoding="utf-8")
    assert recipe.card_extra_text() == recipe.card_overview_text() == expected
    architecture = Recipe(detector={"model": "datasets/recipes/yolo11-dice.yaml"}).detector
    assert architecture.model_path() == str(RECIPES_DIR / "yolo11-dice.yaml")
    assert Recipe(detector={"model": "yolo11n.yaml"}).detector.model_path() == "yolo11n.yaml"
    (tmp_path / "photos").mkdir()
    real = Recipe(real=[tmp_path / "photos", tmp_path / "gone", Path("datasets/samples")])
    assert real.real_dirs() == [tmp_path / "photos", (REPO / "datasets" / "samples").resolve()]
