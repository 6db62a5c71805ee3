"""``datasets/samples/make_samples.py`` makes the committed sample photos and ``truth.json``.

Its docstring tells a maintainer to run it to rewrite the samples. Its ``KNOWN_MISREADS`` still
named ``roll-s21-016.jpg`` after the shipped model had learned to read it (and ``truth.json``
lost the mark): running it wrote the mark back, and ``tests/vision/test_reader_samples.py``'s
strict xfail then failed on a photo read right.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets" / "samples"


def make_samples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_known_misreads_are_those_truth_json_marks() -> None:
    truth = json.loads((SAMPLES / "truth.json").read_text())
    marked = {name: t["known_misread"] for name, t in truth.items() if "known_misread" in t}
    assert marked == make_samples().KNOWN_MISREADS


@pytest.mark.slow
def test_the_script_makes_the_committed_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = make_samples()
    monkeypatch.setattr(script, "HERE", tmp_path)
    script.main()
    assert "8 photos" in capsys.readouterr().out
    made = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in SAMPLES.iterdir() if p.suffix in (".jpg", ".json"))
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name
