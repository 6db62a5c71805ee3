"""The wheel and the sdist: what ``pip install .``, ``pip install dicecam-*.whl`` and ``pipx
install`` put in place must run without the repository (models, recipes, static files and
migrations inside the packages, no top-level ``models`` or ``datasets``).

The wheel is built once, offline (``pip wheel --no-deps --no-build-isolation --no-index``), from
a copy of the files a clone holds (tracked, plus new files git does not ignore), and unpacked
into a folder that stands in for site-packages: its modules are imported from there with this
virtualenv's dependencies, from an unrelated working directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = {"scoring", "vision", "service"}
SHIPPED = {"models": "vision/shipped_models", "datasets/recipes": "vision/train/recipes"}
"""Repository folder -> where the wheel holds it (setup.py)."""
MAX_WHEEL_MB = 12
"""The wheel was 6.1 MB (2026-11-26): the ONNX models are most of it."""

pytestmark = pytest.mark.slow


def _clone_files(dest: Path) -> Path:
    """Copy the files a clone of the repository would hold (plus new, not ignored ones)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the working tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _build_wheel(source: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "-q", "-w", str(out)],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("dicecam-*.whl")
    return wheel


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _clone_files(tmp_path_factory.mktemp("clone"))


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_wheel(source, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel unpacked, as pip lays a pure-Python wheel out in site-packages."""
    site = tmp_path_factory.mktemp("site-packages")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site


def _run_installed(site: Path, code: str, cwd: Path) -> dict:
    """Run ``code`` (which prints one JSON object) against the unpacked wheel, from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    env = {k: v for k, v in env.items() if not k.startswith("DICECAM_")}
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_wheel_holds_the_shipped_models_recipes_static_files_and_migrations(
    wheel_names: set[str],
) -> None:
    expected = {
        f"{SHIPPED['models']}/{p.name}"
        for p in (REPO / "models").iterdir()
        if p.suffix in (".onnx", ".md", ".json")
    }
    expected |= {
        f"{SHIPPED['datasets/recipes']}/{p.name}"
        for p in (REPO / "datasets" / "recipes").iterdir()
        if p.suffix in (".yaml", ".md")
    }
    for folder in ("service/static", "service/tracker/migrations"):
        expected |= {
            p.relative_to(REPO).as_posix()
            for p in (REPO / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
    assert f"{SHIPPED['models']}/dicecam-reader.onnx" in expected
    assert "service/tracker/migrations/script.py.mako" in expected
    assert sorted(expected - wheel_names) == []


def test_wheel_has_only_dicecam_top_level_names_and_no_training_weights(
    wheel: Path, wheel_names: set[str]
) -> None:
    tops = {n.split("/")[0] for n in wheel_names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == PACKAGES  # no top-level models, datasets or tests to shadow other packages
    with zipfile.ZipFile(wheel) as zf:
        top_level = zf.read("dicecam-0.1.0.dist-info/top_level.txt").decode().split()
    assert set(top_level) == PACKAGES
    assert [n for n in wheel_names if n.endswith(".pt")] == []  # training weights: use a clone
    assert wheel.stat().st_size < MAX_WHEEL_MB * 1e6, f"{wheel.stat().st_size / 1e6:.1f} MB"


def test_installed_wheel_reads_dice_and_migrates_without_the_repository(
    installed: Path, tmp_path: Path
) -> None:
    sample = REPO / "datasets" / "samples" / "roll-s21-009.jpg"
    truth = json.loads((REPO / "datasets" / "samples" / "truth.json").read_text())
    code = f"""
import json
import vision, vision.config, vision.table, service.app
from sqlalchemy import create_engine, text
from service.tracker.db import MIGRATIONS, migrate
from vision import DiceReader
from vision.train.recipe import load_recipe

engine = create_engine("sqlite:///{tmp_path / "tracker.sqlite3"}")
migrate(engine)
with engine.connect() as conn:
    head = conn.execute(text("select version_num from alembic_version")).scalar_one()
recipe = load_recipe()
print(json.dumps({{
    "vision": vision.__file__,
    "checkout": str(vision.config.CHECKOUT),
    "paths": [str(p) for p in (
        vision.config.DEFAULT_MODEL, vision.table.DEFAULT_SURFACE_MODEL,
        vision.table.DEFAULT_OFFTABLE_MODEL, service.app.STATIC / "index.html", MIGRATIONS,
        recipe.detector.model_path(),
    )],
    "values": sorted(DiceReader().read({str(sample)!r}).values),
    "head": head,
}}))
"""
    got = _run_installed(installed, code, cwd=tmp_path)
    assert Path(got["vision"]).parent == installed / "vision"
    assert got["checkout"] == "None"
    for path in map(Path, got["paths"]):
        assert path.is_relative_to(installed), path
        assert path.exists(), path
    assert got["values"] == truth[sample.name]["values"]
    versions = sorted((REPO / "service/tracker/migrations/versions").glob("[0-9]*.py"))
    assert got["head"] == versions[-1].name.split("_")[0]


def test_checkout_finds_the_repository_folders() -> None:
    from vision.config import CHECKOUT, DEFAULT_MODEL, MODELS_DIR
    from vision.train.recipe import DEFAULT_RECIPE, RECIPES_DIR, recipe_path

    assert CHECKOUT == REPO
    assert MODELS_DIR == REPO / "models"
    assert DEFAULT_MODEL.is_file()
    assert RECIPES_DIR == REPO / "datasets" / "recipes"
    assert DEFAULT_RECIPE.is_file()
    assert recipe_path("datasets/recipes/yolo11-dice.yaml") == RECIPES_DIR / "yolo11-dice.yaml"
    assert recipe_path("../shared/x") == REPO / "../shared/x"


def test_fine_tuning_from_the_installed_models_says_their_weights_are_not_shipped(
    installed: Path, tmp_path: Path
) -> None:
    code = """
import json
from vision.config import DEFAULT_MODEL
from vision.train.finetune import starting_model
try:
    starting_model(DEFAULT_MODEL)
except FileNotFoundError as e:
    print(json.dumps({"error": str(e)}))
"""
    got = _run_installed(installed, code, cwd=tmp_path)
    assert "dicecam-reader.pt" in got["error"]
    assert "installed dicecam ships no .pt weights" in got["error"]


def test_sdist_builds_the_same_wheel(source: Path, wheel_names: set[str], tmp_path: Path) -> None:
    out = tmp_path / "sdist"
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from setuptools import build_meta as b; print(b.build_sdist({str(out)!r}))",
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (sdist,) = out.glob("dicecam-*.tar.gz")
    with tarfile.open(sdist) as tf:
        tf.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    again = _build_wheel(unpacked, tmp_path / "again")
    with zipfile.ZipFile(again) as zf:
        assert set(zf.namelist()) == wheel_names
