"""The detector's two runtimes (OpenVINO, onnxruntime) read the same dice from the same file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision import backends as backends_module
from vision.backends import STATIC_SHAPES, open_detector, resolve_backend

pytest.importorskip("openvino", reason="openvino is a dependency of the reader")

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"
SAMPLES = sorted((REPO / "datasets" / "samples").glob("*.jpg"))


@pytest.fixture(scope="module")
def shipped() -> Path:
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    return MODEL


def test_both_runtimes_read_the_sample_photos_alike(shipped):
    readers = {
        name: DiceReader(shipped, backend=name, table=None) for name in ("openvino", "onnxruntime")
    }
    assert {r.backend for r in readers.values()} == {"openvino", "onnxruntime"}
    assert readers["openvino"].metadata == readers["onnxruntime"].metadata
    assert readers["openvino"].names == readers["onnxruntime"].names
    assert len(SAMPLES) >= 5
    for photo in SAMPLES:
        a, b = (readers[n].read(photo) for n in ("openvino", "onnxruntime"))
        assert [d.value for d in a.dice] == [d.value for d in b.dice], photo.name
        assert a.dice, photo.name
        np.testing.assert_allclose(
            [d.box for d in a.dice], [d.box for d in b.dice], atol=0.05, err_msg=photo.name
        )
        np.testing.assert_allclose(
            [d.confidence for d in a.dice], [d.confidence for d in b.dice], atol=1e-3
        )


def test_openvino_builds_a_few_photo_shapes_then_shares_a_shape_free_one(shipped):
    ov = open_detector(shipped, backend="openvino")
    ort = open_detector(shipped, backend="onnxruntime")
    assert (ov.backend, ort.backend) == ("openvino", "onnxruntime")
    rng = np.random.default_rng(0)
    batches = [(3, 3, 64, 96), (2, 3, 64, 96)]
    for shape in batches:  # several photos: the shape-free build, whatever their number
        blob = rng.random(shape, dtype=np.float32)
        np.testing.assert_allclose(ov.run(blob), ort.run(blob), atol=2e-3, rtol=1e-3)
    assert not ov._static and ov._dynamic is not None
    shapes = [(1, 3, 32 * k, 64 + 32 * k) for k in range(1, STATIC_SHAPES + 3)]
    for shape in shapes + shapes[:2]:
        blob = rng.random(shape, dtype=np.float32)
        np.testing.assert_allclose(ov.run(blob), ort.run(blob), atol=2e-3, rtol=1e-3)
    assert list(ov._static) == shapes[:STATIC_SHAPES]


def test_readers_of_one_file_share_its_openvino_builds_and_a_new_file_gets_its_own(
    shipped, tmp_path, monkeypatch
):
    import shutil

    built = []
    compile_model = backends_module._compiled_model

    def counting(core, model, key, config):
        built.append(key not in backends_module._compiled)
        return compile_model(core, model, key, config)

    monkeypatch.setattr(backends_module, "_compiled_model", counting)
    monkeypatch.setattr(backends_module, "_compiled", {})
    blob = np.random.default_rng(1).random((1, 3, 96, 128), dtype=np.float32)
    first = open_detector(shipped, backend="openvino")
    out = first.run(blob)
    second = open_detector(shipped, backend="openvino")
    np.testing.assert_array_equal(second.run(blob), out)  # its own request, the same build
    assert second._static[(1, 3, 96, 128)] is not first._static[(1, 3, 96, 128)]
    assert built == [True, False]
    monkeypatch.setattr(backends_module, "COMPILED_KEPT", 1)  # the newest build only
    copy = tmp_path / "reader.onnx"  # a model written over (fine-tuned) is another build
    shutil.copyfile(shipped, copy)
    open_detector(copy, backend="openvino").run(blob)
    assert built == [True, False, True]
    open_detector(shipped, backend="openvino").run(blob)  # its build went for the copy's
    assert built == [True, False, True, True] and len(backends_module._compiled) == 1


def test_the_backend_setting_picks_the_runtime(shipped, monkeypatch):
    monkeypatch.setenv("DICECAM_BACKEND", "onnxruntime")
    assert DiceReader(shipped, table=None).backend == "onnxruntime"
    monkeypatch.setenv("DICECAM_BACKEND", "auto")
    assert DiceReader(shipped, table=None).backend == "openvino"
    assert resolve_backend(" OpenVINO ") == "openvino"


def test_an_unknown_or_missing_backend_is_a_clear_error(shipped, monkeypatch):
    with pytest.raises(ValueError, match="expected a backend among auto, openvino, onnxruntime"):
        DiceReader(shipped, backend="tensorrt")
    real = backends_module.importlib.util.find_spec
    monkeypatch.setattr(
        backends_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "openvino" else real(name, *a),
    )
    assert resolve_backend("auto") == "onnxruntime"
    with pytest.raises(ValueError, match="openvino is not installed"):
        resolve_backend("openvino")


@pytest.mark.parametrize("backend", ["openvino", "onnxruntime"])
def test_one_reader_serves_several_threads_at_once(shipped, backend):
    from concurrent.futures import ThreadPoolExecutor

    reader = DiceReader(shipped, backend=backend, table=None)
    photos = SAMPLES * 3
    alone = [[(d.value, d.box) for d in reader.read(p).dice] for p in photos]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda p: [(d.value, d.box) for d in reader.read(p).dice], photos))
    assert together == alone


def test_threads_and_providers_reach_the_runtime(shipped):
    ort = open_detector(shipped, threads=3, backend="onnxruntime")
    assert ort._sessions[0].get_session_options().intra_op_num_threads == 3
    # the default CPU provider leaves the choice to the backend; any other list is onnxruntime's
    cpu = open_detector(shipped, backend="openvino", providers=["CPUExecutionProvider"])
    assert cpu.backend == "openvino"
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):  # no CUDA here: CPU
        gpu = open_detector(
            shipped, backend="openvino", providers=["CUDAExecutionProvider", "CPUExecutionProvider"]
        )
    assert gpu.backend == "onnxruntime"
    blob = np.random.default_rng(2).random((1, 3, 64, 96), dtype=np.float32)
    ov = open_detector(shipped, threads=1, backend="openvino")
    ov.run(blob)
    (request,) = ov._static.values()
    assert request.get_compiled_model().get_property("INFERENCE_NUM_THREADS") == 1
    two = open_detector(shipped, threads=2, backend="openvino")
    two.run(blob)
    assert two._static[blob.shape].get_compiled_model().get_property("INFERENCE_NUM_THREADS") == 2


@pytest.mark.parametrize("backend", ["openvino", "onnxruntime"])
def test_an_output_is_the_callers_and_the_next_run_leaves_it_alone(shipped, backend):
    detector = open_detector(shipped, backend=backend)
    rng = np.random.default_rng(3)
    first, second = (rng.random((1, 3, 96, 128), dtype=np.float32) for _ in range(2))
    out = detector.run(first)
    kept = out.copy()
    assert not np.array_equal(detector.run(second), kept)
    np.testing.assert_array_equal(out, kept)  # not a view of the runtime's reused memory


def test_a_model_file_written_over_in_place_gets_a_new_build(shipped, tmp_path, monkeypatch):
    import os
    import shutil

    monkeypatch.setattr(backends_module, "_compiled", {})
    copy = tmp_path / "reader.onnx"
    shutil.copyfile(shipped, copy)
    blob = np.random.default_rng(4).random((1, 3, 64, 64), dtype=np.float32)
    open_detector(copy, backend="openvino").run(blob)
    builds = len(backends_module._compiled)
    open_detector(copy, backend="openvino").run(blob)  # the same file: its builds again
    assert len(backends_module._compiled) == builds
    stat = copy.stat()  # the same path and size, saved again (a fine-tuned model's new weights)
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    open_detector(copy, backend="openvino").run(blob)
    assert len(backends_module._compiled) == 2 * builds
