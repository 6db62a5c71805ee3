"""``python -m vision.train.cocked|offtable|verify``: each option reaches the training function
under its own keyword, and the figures are printed as one JSON line."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vision.train.cocked as cocked
import vision.train.offtable as offtable
import vision.train.verify as verify


@pytest.mark.parametrize(
    ("module", "train", "argv", "expected"),
    [
        (
            cocked,
            "train_cocked",
            ["a", "b", "--epochs", "3", "--context", "2.5", "--size", "40", "--threshold", "0.4"]
            + ["--threshold-alone", "0.7", "--threads", "2", "--limit", "5"],
            {
                "data": ["a", "b"],
                "out": "models/dicecam-reader-cocked.onnx",
                "epochs": 3,
                "context": 2.5,
                "size": 40,
                "threshold": 0.4,
                "threshold_alone": 0.7,
                "threads": 2,
                "limit": 5,
            },
        ),
        (
            offtable,
            "train_offtable",
            ["a", "--out", "x.onnx", "--batch", "16", "--lr", "0.01", "--width", "0.5"],
            {
                "data": ["a"],
                "out": "x.onnx",
                "epochs": 8,
                "batch": 16,
                "lr": 0.01,
                "width": 0.5,
                "threads": None,
                "limit": None,
            },
        ),
        (
            verify,
            "train_verifier",
            ["--real", "r1", "r2", "--model", "m.onnx", "--keep", "0.99", "--background", "3"]
            + ["--cache", "c.npz", "--epochs", "1"],
            {
                "data": [],
                "out": "models/dicecam-reader-verify.onnx",
                "real": ["r1", "r2"],
                "model": "m.onnx",
                "epochs": 1,
                "context": 1.5,
                "size": 48,
                "keep": 0.99,
                "background": 3,
                "threads": None,
                "cache": "c.npz",
            },
        ),
    ],
)
def test_each_option_reaches_the_training_and_the_figures_are_printed(
    module: Any,
    train: str,
    argv: list[str],
    expected: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[dict[str, Any]] = []

    def fake(data: Any, out: Any, **options: Any) -> dict[str, Any]:
        calls.append({"data": data, "out": out, **options})
        return {"epochs": options["epochs"], "train_seconds": 1}

    monkeypatch.setattr(module, train, fake)
    assert module.main(argv) == 0
    assert calls == [expected]
    assert json.loads(capsys.readouterr().out) == {"epochs": expected["epochs"], "train_seconds": 1}


@pytest.mark.parametrize("module", [cocked, offtable])
def test_a_synth_command_wants_a_folder(module: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        module.main([])
    assert stopped.value.code == 2
    assert "the following arguments are required: data" in capsys.readouterr().err
