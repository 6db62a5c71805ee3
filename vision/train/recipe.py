"""The training recipe: one YAML file says how the shipped reader is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vision.config import CHECKOUT, shipped_folder

__all__ = [
    "DetectorRecipe",
    "FacesRecipe",
    "Recipe",
    "SynthRecipe",
    "TestRecipe",
    "load_recipe",
    "recipe_path",
]

REPO = CHECKOUT if CHECKOUT is not None else Path.cwd()
"""Where a recipe's relative paths start: the repository, else (installed) the current folder."""
RECIPES_DIR = shipped_folder("train/recipes", "datasets/recipes")
"""The shipped recipes: ``datasets/recipes/``, in the package once installed."""
DEFAULT_RECIPE = RECIPES_DIR / "dicecam-reader.yaml"


def recipe_path(path: str | Path) -> Path:
    """A path a recipe names: absolute as it is, ``datasets/recipes/...`` in :data:`RECIPES_DIR`
    (installed too), any other from :data:`REPO`."""
    path = Path(path)
    if path.is_absolute():
        return path
    if path.parts[:2] == ("datasets", "recipes"):
        return RECIPES_DIR.joinpath(*path.parts[2:])
    return REPO / path


class _Section(BaseModel):
    """A part of the recipe: a key it does not know (``epoch:`` for ``epochs:``) is refused,
    not trained past with the default in its place."""

    model_config = ConfigDict(extra="forbid")


class SynthRecipe(_Section):
    n: int = Field(2400, ge=0)
    seed: int = 1
    size: tuple[int, int] = (640, 640)
    val_fraction: float = Field(0.1, ge=0.0, lt=1.0)


class DetectorRecipe(_Section):
    model: str = "yolo11n.yaml"
    """An ultralytics architecture name, or a yaml/checkpoint path relative to the repository."""
    imgsz: int = Field(320, ge=32)
    epochs: int = Field(40, ge=1)
    time_hours: float | None = None
    batch: int = Field(16, ge=1)
    cache: str | bool = "ram"
    single_cls: bool = False
    """One class, "die": the detector only finds dice and the face classifier reads them."""
    augment: dict[str, Any] = Field(default_factory=dict)

    def model_path(self) -> str:
        path = recipe_path(self.model)
        return str(path) if path.is_file() else self.model


class FacesRecipe(_Section):
    epochs: int = Field(14, ge=1)
    batch: int = Field(128, ge=1)
    lr: float = Field(3e-3, gt=0)
    jitter: int = Field(2, ge=0)
    width: float = Field(1.0, gt=0)
    """Channel multiplier of the network (1.0: 16-32-64-96 channels)."""
    blur: float = Field(0.0, ge=0, le=1)
    """Share of the training crops blurred (a Gaussian of sigma 0.5-2 crop pixels, as a soft or
    shaken camera gives them; :func:`vision.train.classifier.blur_crops`)."""
    int8: bool = True
    """Ship the ONNX file quantized to int8 (:mod:`vision.train.quantize`), calibrated on the
    training crops; the ``.pt`` beside it stays float32."""


class TestRecipe(_Section):
    """A synthetic test set from a seed never used for training, rendered for the card."""

    n: int = Field(200, ge=0)
    seed: int = 7
    size: tuple[int, int] = (640, 640)


class Recipe(_Section):
    name: str = "dicecam-reader"
    synth: SynthRecipe = SynthRecipe()
    test: TestRecipe = TestRecipe()
    real: list[Path] = Field(default_factory=list)
    detector: DetectorRecipe = DetectorRecipe()
    faces: FacesRecipe = FacesRecipe()
    reproduce: list[str] = Field(default_factory=list)
    """The commands that made the shipped model, for its card (default: the command run)."""
    notes: list[str] = Field(default_factory=list)
    card_overview: Path | None = None
    """Hand-written Markdown (the card at a glance: what ships, today's figures) placed before
    the card's data each time it is written; a relative path is from the repository."""
    card_extra: Path | None = None
    """Hand-written Markdown (measured speed, limits) appended to the card each time it is
    written; a relative path is from the repository."""

    def card_overview_text(self) -> str | None:
        """The text of ``card_overview``, or None when unset.

        Raises:
            FileNotFoundError: ``card_overview`` is set but the file is missing.
        """
        return _hand_written("card_overview", self.card_overview)

    def card_extra_text(self) -> str | None:
        """The text of ``card_extra``, or None when unset.

        Raises:
            FileNotFoundError: ``card_extra`` is set but the file is missing.
        """
        return _hand_written("card_extra", self.card_extra)

    def real_dirs(self) -> list[Path]:
        """The real photo folders that exist here (relative paths are from the repository)."""
        dirs = [recipe_path(p).resolve() for p in self.real]
        return [p for p in dirs if p.is_dir()]


def _hand_written(field: str, path: Path | None) -> str | None:
    """The text of the hand-written card file a recipe's ``field`` names, None when unset."""
    if path is None:
        return None
    path = recipe_path(path)
    if not path.is_file():
        raise FileNotFoundError(f"the recipe's {field} file is missing: {path}")
    return path.read_text(encoding="utf-8")


def load_recipe(path: str | Path | None = None) -> Recipe:
    """Read a recipe YAML (default: the shipped reader's).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a mapping, a key the recipe does not have, or a value out of its range,
            said in one line naming the key.
    """
    import yaml

    path = Path(path) if path is not None else DEFAULT_RECIPE
    if not path.is_file():
        raise FileNotFoundError(f"recipe not found: {path}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of recipe fields, got {type(data).__name__}")
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: {_first_error(exc)}") from None
    if recipe.test.n and recipe.test.seed == recipe.synth.seed:  # said now, not at the card
        raise ValueError(
            f"{path}: expected a test.seed other than synth.seed (the card's test set is held "
            f"out of training), got {recipe.test.seed} for both"
        )
    return recipe


def _first_error(exc: ValidationError) -> str:
    """The first mistake pydantic found in a recipe, in one line: the key, what was expected
    there and what came."""
    errors = exc.errors()
    error = errors[0]
    key = ".".join(map(str, error["loc"]))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if error["type"] == "extra_forbidden":
        section: type[BaseModel] = Recipe
        for part in error["loc"][:-1]:
            section = section.model_fields[str(part)].annotation  # type: ignore[assignment]
        known = ", ".join(section.model_fields)
        return f"unknown recipe key {key}: expected one of {known}{more}"
    said = error["msg"][:1].lower() + error["msg"][1:]
    return f"{key}: {said}, got {error['input']!r}{more}"
