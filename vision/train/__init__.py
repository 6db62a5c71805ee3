"""Training tools (optional extra ``[train]``: ultralytics and torch). The runtime never imports
this package.

- :func:`prepare_ultralytics`: ultralytics offline, quiet and using every core.
- :func:`train_detector`, :func:`export_onnx`: the YOLO detector.
- :func:`train_classifier`, :func:`export_classifier`: the face classifier on die crops.
- :func:`load_recipe`: the recipe of the shipped reader (``datasets/recipes/``).
"""

from .recipe import Recipe, load_recipe

__all__ = [
    "Recipe",
    "export_classifier",
    "export_onnx",
    "load_recipe",
    "prepare_ultralytics",
    "train_classifier",
    "train_detector",
]


def __getattr__(name: str):
    # heavy modules (torch, ultralytics) load on first use
    if name in ("train_detector", "export_onnx"):
        from . import detector

        return getattr(detector, name)
    if name in ("train_classifier", "export_classifier"):
        from . import classifier

        return getattr(classifier, name)
    if name == "prepare_ultralytics":
        from .env import prepare_ultralytics

        return prepare_ultralytics
    raise AttributeError(name)
