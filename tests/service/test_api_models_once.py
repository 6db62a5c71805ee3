"""A real service loads each model file once, whatever routes it serves: reads, calibration
proposals, a stored calibration and its removal. The proposal route loaded the outline model
again (a second onnxruntime session of the same file, at one thread), and the table step the
service gives a reader without an outline model of its own loaded the outline and off-table
models again (at one thread instead of the reader's)."""

from __future__ import annotations

from collections import Counter, OrderedDict
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.cli import ROOT, SAMPLES
from dicecam_testing.page import TruthReader
from dicecam_testing.servers import LiveServer

READER_FILES = {
    "dicecam-reader.onnx",
    "dicecam-reader-faces.onnx",
    "dicecam-reader-cocked.onnx",
    "dicecam-reader-verify.onnx",
}
TABLE_FILES = {"dicecam-surface.onnx", "dicecam-offtable.onnx"}
CORNERS = [[0, 0], [640, 0], [640, 480], [0, 480]]
MODELS = ROOT / "models"


@pytest.fixture
def sessions(monkeypatch, tmp_path) -> Counter[str]:
    """How many onnxruntime sessions each model file gets, by its name, and how many times the
    detector is opened (``open_detector``, on OpenVINO); nothing kept from an earlier test."""
    import onnxruntime as ort

    from vision import backends, model_files

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DICECAM_BACKEND", "openvino")  # the detector: counted once, opened
    monkeypatch.setattr(model_files, "_kept", OrderedDict())
    counted: Counter[str] = Counter()

    class CountedSession(ort.InferenceSession):
        def __init__(self, path, *args, **kwargs) -> None:
            counted[Path(str(path)).name] += 1
            super().__init__(path, *args, **kwargs)

    open_detector = backends.open_detector

    def counting_detector(model, **options):
        counted[Path(model).name] += 1
        return open_detector(model, **options)

    monkeypatch.setattr(ort, "InferenceSession", CountedSession)
    monkeypatch.setattr(backends, "open_detector", counting_detector)
    return counted


def serve_routes(app, *, proposals: bool = True) -> None:
    """Ask a real server of ``app`` for a proposal, a read, a stored calibration, a read, the
    calibration's removal, a read and a proposal (the proposals left out unless ``proposals``)."""
    photo = SAMPLES[0].read_bytes()
    steps = [
        ("post", "/api/v1/calibration/proposal", None),
        ("post", "/api/v1/read", None),
        ("put", "/api/v1/calibration", {"points": CORNERS, "width": 640, "height": 480}),
        ("post", "/api/v1/read", None),
        ("delete", "/api/v1/calibration", None),
        ("post", "/api/v1/read", None),
        ("post", "/api/v1/calibration/proposal", None),
    ]
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        for n, (method, route, body) in enumerate(steps):
            if route.endswith("/proposal") and not proposals:
                continue
            files = None
            if body is None and method == "post":  # a new photo each time: no cached reading
                files = {"photo": ("roll.jpg", photo + bytes(n), "image/jpeg")}
            r = client.request(method, route, files=files, json=body)
            assert r.status_code == 200, (route, r.text)
            if route.endswith("/proposal"):
                assert r.json()["note"], r.text


def test_a_reader_without_an_outline_shares_the_models_serve_checked(
    sessions, tmp_path, monkeypatch
):
    """``dicecam serve`` loads the outline and off-table models a variable names at start, at
    the reader's threads; the table step the service gives a reader without one (a stand-in
    reader here) holds those, not a second load of each at one thread."""
    import service.api.reader
    import service.cli.serve
    from service.cli import main

    for variable, name in [
        ("DICECAM_SURFACE_MODEL", "dicecam-surface.onnx"),
        ("DICECAM_OFFTABLE_MODEL", "dicecam-offtable.onnx"),
    ]:
        monkeypatch.setenv(variable, str(MODELS / name))
    reader = TruthReader([])
    reader.table = None
    monkeypatch.setattr(service.api.reader, "_default_factory", lambda: reader)
    monkeypatch.setattr(
        service.cli.serve, "run_uvicorn", lambda app, **config: serve_routes(app, proposals=False)
    )
    args = ["serve", "--port", "0", "--no-tracker", "--data-dir", str(tmp_path / "data")]
    assert main(args) == 0
    assert reader.calls == 3 and reader.table.model is not None
    assert sessions == dict.fromkeys(TABLE_FILES, 1)


def test_the_proposals_use_the_outline_model_of_the_shipped_reader(sessions, tmp_path):
    app = create_app(Settings(data_dir=tmp_path / "data"), tracker_app=None, submitter=None)
    serve_routes(app)
    assert sessions == dict.fromkeys(READER_FILES | TABLE_FILES, 1)
