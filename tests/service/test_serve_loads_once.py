"""``dicecam serve`` loads the models a ``DICECAM_*_MODEL`` variable names at start, to refuse
one that does not load; the first photo then reads with those same models. Each was loaded
again at the first photo (the outline and off-table models twice at start too)."""

from __future__ import annotations

import io
from collections import Counter, OrderedDict
from pathlib import Path

import httpx
import pytest

from dicecam_testing.cli import ROOT, SAMPLES
from dicecam_testing.servers import LiveServer

MODELS = ROOT / "models"


@pytest.fixture
def loads(monkeypatch) -> Counter[str]:
    """How many times each model file is loaded, by its name: the detector through
    ``open_detector``, the small models through ``cpu_session`` (their onnxruntime session);
    nothing kept from an earlier test."""
    from vision import backends, model_files, runtime

    monkeypatch.setattr(model_files, "_kept", OrderedDict())
    counted: Counter[str] = Counter()
    session, detector = runtime.cpu_session, backends.open_detector

    def counting_session(model, threads):
        counted[Path(model).name] += 1
        return session(model, threads)

    def counting_detector(model, **options):
        counted[Path(model).name] += 1
        return detector(model, **options)

    monkeypatch.setattr(runtime, "cpu_session", counting_session)
    monkeypatch.setattr(backends, "open_detector", counting_detector)
    return counted


@pytest.mark.parametrize(
    ("variables", "model"),
    [
        # the reader's second-stage models: serve's check loads the shipped reader with them
        (("DICECAM_FACES_MODEL", "DICECAM_SURFACE_MODEL", "DICECAM_OFFTABLE_MODEL"), False),
        (("DICECAM_SURFACE_MODEL", "DICECAM_OFFTABLE_MODEL"), False),
        ((), True),  # --model: the check loads that reader, with the models beside it
    ],
)
def test_each_model_serve_checks_at_start_is_loaded_once_through_the_first_photo(
    variables, model, loads, tmp_path, monkeypatch
):
    import service.cli.serve
    from service.cli import main

    named = {
        "DICECAM_FACES_MODEL": "dicecam-reader-faces.onnx",
        "DICECAM_SURFACE_MODEL": "dicecam-surface.onnx",
        "DICECAM_OFFTABLE_MODEL": "dicecam-offtable.onnx",
    }
    for variable in variables:
        monkeypatch.setenv(variable, str(MODELS / named[variable]))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("DICECAM_MODEL", raising=False)  # serve sets it to --model's: undone
    answers: dict[str, httpx.Response] = {}

    def serve_one_photo(app, **config):  # uvicorn.run, on a real server for one photo
        with LiveServer(app) as server:
            answers["before"] = httpx.get(server.url + "/api/v1/health", timeout=30)
            files = {"photo": ("roll.jpg", io.BytesIO(SAMPLES[0].read_bytes()), "image/jpeg")}
            answers["read"] = httpx.post(server.url + "/api/v1/read", files=files, timeout=120)

    monkeypatch.setattr(service.cli.serve, "run_uvicorn", serve_one_photo)
    args = ["serve", "--port", "0", "--no-tracker", "--data-dir", str(tmp_path / "data")]
    args += ["--model", str(MODELS / "dicecam-reader.onnx")] if model else []
    assert main(args) == 0
    assert answers["before"].json()["reader"]["loaded"] is False  # the reader loads at the photo
    assert answers["read"].status_code == 200, answers["read"].text
    assert answers["read"].json()["outline_source"] == "learned"
    every = {
        "dicecam-reader.onnx",
        "dicecam-reader-faces.onnx",
        "dicecam-reader-cocked.onnx",
        "dicecam-reader-verify.onnx",
        "dicecam-surface.onnx",
        "dicecam-offtable.onnx",
    }
    assert loads == dict.fromkeys(every, 1)
