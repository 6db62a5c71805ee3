"""Packaging beyond what pyproject.toml can say: the repository's ``models/`` and
``datasets/recipes/`` go into the wheel inside ``vision`` (``vision/shipped_models/``,
``vision/train/recipes/``), where :func:`vision.config.shipped_folder` finds them once installed.
There is no top-level ``models`` or ``datasets`` package, and the ``.pt`` training weights stay
out of the wheel (fine-tuning and training run from a clone)."""

from setuptools import find_namespace_packages, setup

SHIPPED = {"vision.shipped_models": "models", "vision.train.recipes": "datasets/recipes"}

setup(
    packages=[*find_namespace_packages(include=["scoring*", "vision*", "service*"]), *SHIPPED],
    package_dir=SHIPPED,
)
