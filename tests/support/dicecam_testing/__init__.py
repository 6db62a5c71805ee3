"""Helpers the tests share: tiny ONNX models with known outputs (:mod:`.onnx_models`), the
camera page in chromium (:mod:`.page`), YOLO folders (:mod:`.folders`), stand-ins for the
table step's models (:mod:`.table`) and a reader that reports queued rolls (:mod:`.turns`).

``tests/support`` is on pytest's ``pythonpath`` (pyproject.toml), so a test imports them as
``from dicecam_testing.onnx_models import make_model``; test modules never import each other.
"""
