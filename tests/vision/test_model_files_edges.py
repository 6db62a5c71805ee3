"""Model files at their edges: a folder's models said in order, a file that cannot be read, a
file replaced or rewritten without its usual marks of change, two threads loading one model,
and the detector kept per runtime and thread count."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

import pytest

from vision import model_files
from vision.model_files import check_model_file, kept_model
from vision.reader import ModelError
from vision.reader_model import open_reader_model

from dicecam_testing.cli import ROOT

SHIPPED = ROOT / "models" / "dicecam-reader.onnx"


@pytest.fixture
def kept(monkeypatch) -> OrderedDict:
    fresh: OrderedDict = OrderedDict()
    monkeypatch.setattr(model_files, "_kept", fresh)
    return fresh


def _counting() -> tuple[list[object], object]:
    made: list[object] = []

    def load() -> object:
        made.append(object())
        return made[-1]

    return made, load


def test_a_folder_names_its_models_in_alphabetical_order(tmp_path):
    names = ["zeta.onnx", "mid.onnx", "alpha.onnx", "beta.onnx", "omega.onnx", "gamma.onnx"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    with pytest.raises(ValueError) as caught:
        check_model_file(tmp_path, "reader model")
    assert f"(a folder; it holds {', '.join(sorted(names))})" in str(caught.value)


def test_a_file_that_cannot_be_read_says_why():
    with pytest.raises(ValueError) as caught:  # a regular file to stat(), EIO to read()
        check_model_file("/proc/self/mem", "face classifier")
    assert str(caught.value) == (
        "expected the face classifier (an ONNX file), got '/proc/self/mem' "
        "(cannot read it: Input/output error)"
    )


def test_a_model_rewritten_to_another_size_with_its_old_time_loads_anew(tmp_path, kept):
    """A copy that keeps the modification time (cp -p, rsync -t) over the file in place."""
    model = tmp_path / "m.onnx"
    model.write_bytes(b"first")
    os.utime(model, ns=(5, 5))
    made, load = _counting()
    first = kept_model(model, ("a",), load)
    model.write_bytes(b"longer, fine-tuned")
    os.utime(model, ns=(5, 5))
    assert kept_model(model, ("a",), load) is made[1] is not first


def test_a_model_replaced_by_another_file_of_its_size_and_time_loads_anew(tmp_path, kept):
    """An atomic write (a new file renamed over the old) that kept the size and the time."""
    model = tmp_path / "m.onnx"
    model.write_bytes(b"first")
    os.utime(model, ns=(5, 5))
    made, load = _counting()
    first = kept_model(model, ("a",), load)
    new = tmp_path / "m.onnx.part"
    new.write_bytes(b"other")
    os.utime(new, ns=(5, 5))
    os.replace(new, model)
    assert kept_model(model, ("a",), load) is made[1] is not first


def test_a_path_that_is_not_there_is_left_to_the_loader_to_refuse(tmp_path, kept):
    def load() -> object:
        raise ValueError("the loader's own message")

    with pytest.raises(ValueError, match="^the loader's own message$"):
        kept_model(tmp_path / "gone.onnx", (), load)
    made, loads = _counting()
    assert kept_model(tmp_path / "gone.onnx", (), loads) is made[0]
    assert not kept


def test_two_threads_loading_one_model_at_once_get_the_same_object(tmp_path, kept):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    both_loading = threading.Barrier(2, timeout=10)

    def load() -> object:
        both_loading.wait()  # each thread is inside load(): neither found the other's model
        return object()

    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(kept_model(model, ("a",), load)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(got) == 2 and got[0] is got[1] and list(kept.values()) == [got[0]]


def test_the_detector_is_kept_per_thread_count(kept):
    two, _ = open_reader_model(SHIPPED, threads=2, backend="onnxruntime")
    assert open_reader_model(SHIPPED, threads=2, backend="onnxruntime")[0] is two
    one, _ = open_reader_model(SHIPPED, threads=1, backend="onnxruntime")
    assert one is not two
    assert one._sessions[0].get_session_options().intra_op_num_threads == 1


def test_a_detector_the_runtime_cannot_load_is_said_in_one_line(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07" + b"not a model at all" * 10)
    for backend in ("onnxruntime", "openvino"):
        with pytest.raises(ModelError) as caught:
            open_reader_model(junk, threads=1, backend=backend)
        said = str(caught.value)
        assert said.startswith(f"cannot load reader model {junk} (expected an ONNX export")
        assert "\n" not in said and "  " not in said
