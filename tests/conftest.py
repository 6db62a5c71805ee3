"""Shared fixtures. Paths to data outside the repository skip with a reason when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# ultralytics (the train extra) must never pip-install or phone home during tests.
os.environ["YOLO_AUTOINSTALL"] = "false"
os.environ.setdefault("YOLO_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ROBOFLOW = SHARED / "datasets" / "roboflow-dice"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def roboflow_eval() -> Path:
    path = ROBOFLOW / "eval"
    if not (path / "images").is_dir():
        pytest.skip(f"real photo set not found at {path} (it lives in ../shared, outside the repo)")
    return path


@pytest.fixture(scope="session")
def rules_dir() -> Path:
    path = SHARED / "rules"
    if not path.is_dir():
        pytest.skip(f"rule texts not found at {path}")
    return path
