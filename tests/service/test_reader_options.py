"""The reader flags of ``dicecam read`` and ``dicecam eval`` (``--conf``, ``--imgsz``,
``--second-look``, ``--mirror``, ``--backend``): each value at the edge of its range is taken,
each one past it refused naming the flag and the value, and each flag given reaches the reader
the command reads with, over its ``DICECAM_*`` setting."""

from __future__ import annotations

import importlib.util

import pytest

from service.cli import UsageError, build_parser
from service.cli._reader_options import check_reader_options, open_reader


def _args(*flags: str):
    return build_parser().parse_args(["read", "roll.jpg", *flags])


@pytest.mark.parametrize(
    "flags",
    [
        ["--conf", "0"],
        ["--conf", "1"],  # every die kept only if sure: still a confidence
        ["--imgsz", "32"],  # the smallest input size
        ["--second-look", "0"],  # 0: never a second look
    ],
)
def test_a_value_at_the_edge_of_its_range_is_taken(flags):
    check_reader_options(_args(*flags))


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--conf", "1.01"], "--conf must be between 0 and 1, got 1.01"),
        (["--conf", "-0.01"], "--conf must be between 0 and 1, got -0.01"),
        (["--imgsz", "0"], "--imgsz must be an input size of at least 32, got 0"),
        (["--imgsz", "48"], "--imgsz: "),
        (["--second-look", "-1"], "--second-look must be an input size (0: never), got -1"),
    ],
)
def test_a_value_past_its_range_is_refused_naming_the_flag(flags, said):
    with pytest.raises(UsageError) as refused:
        check_reader_options(_args(*flags))
    assert said in str(refused.value)
    assert str(refused.value).endswith(f"got {flags[1]}")


def test_each_flag_given_reaches_the_reader_over_its_setting(monkeypatch):
    """A flag the reader never got read every photo with the setting's value, silently."""
    monkeypatch.setenv("DICECAM_CONF", "0.3")
    monkeypatch.setenv("DICECAM_IMGSZ", "512")
    monkeypatch.setenv("DICECAM_SECOND_LOOK", "768")
    monkeypatch.setenv("DICECAM_MIRROR", "1")
    monkeypatch.setenv("DICECAM_BACKEND", "auto")
    flags = ["--conf", "0.4", "--imgsz", "320", "--second-look", "640", "--no-mirror"]
    reader = open_reader(_args(*flags, "--backend", "onnxruntime"))
    assert reader.conf == 0.4
    assert reader.imgsz == (320, 320)
    assert reader.second_look == 640
    assert reader.mirror is False
    assert reader.backend == "onnxruntime"
    monkeypatch.setenv("DICECAM_MIRROR", "0")
    monkeypatch.setenv("DICECAM_BACKEND", "onnxruntime")
    if importlib.util.find_spec("openvino") is not None:  # auto would take it: say it
        assert open_reader(_args("--mirror", "--backend", "openvino")).backend == "openvino"
    assert open_reader(_args("--mirror", "--second-look", "0")).mirror is True
    assert open_reader(_args("--second-look", "0")).second_look is None


def test_a_model_that_does_not_load_is_named_with_the_setting_that_chose_it(monkeypatch, tmp_path):
    missing = tmp_path / "x-ft.onnx"
    monkeypatch.setenv("DICECAM_MODEL", str(missing))
    with pytest.raises(UsageError, match=r"\(named by DICECAM_MODEL\)$"):
        open_reader(_args())
    with pytest.raises(UsageError, match=r"\(named by --model\)$"):
        open_reader(_args("--model", str(missing)))
