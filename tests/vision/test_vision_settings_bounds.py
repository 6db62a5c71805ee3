"""The DICECAM_ reader settings (:class:`vision.config.VisionSettings`): the defaults the
README and the reader's docstring give, each bound taken at its edge and refused past it, with
the variable named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vision.config import VisionSettings


@pytest.fixture(autouse=True)
def _no_dicecam_variables(monkeypatch):
    import os

    for name in [n for n in os.environ if n.startswith("DICECAM_")]:
        monkeypatch.delenv(name)


def test_the_defaults_are_the_documented_ones():
    s = VisionSettings()
    assert (s.conf, s.iou, s.threads, s.backend) == (0.25, 0.5, 2, "auto")
    assert (s.imgsz, s.second_look, s.second_look_below, s.second_look_conf) == (
        None,
        None,
        24.0,
        0.1,
    )
    assert (s.fit_count, s.fit_conf, s.fit_min_verify) == (True, 0.02, 0.3)
    assert (s.sure_faint, s.sure_faint_conf, s.sure_faint_check, s.sure_faint_face) == (
        True,
        0.05,
        0.6,
        0.8,
    )
    assert (s.unsure_below, s.mirror, s.faces_tta) == (0.6, True, True)
    assert (s.max_image_pixels, s.max_decoded_pixels) == (120_000_000, 40_000_000)
    assert (s.faces_model, s.cocked_model, s.verify_model) == (None, None, None)
    assert (s.cocked_threshold, s.verify_threshold) == (None, None)


# (variable, taken at the edge, refused past it, what pydantic says of the refused one)
BOUNDS = [
    ("DICECAM_CONF", ["0", "1"], ["-0.01", "1.01"], "Input should be"),
    ("DICECAM_IOU", ["1", "0.01"], ["0", "1.5"], "Input should be"),
    ("DICECAM_THREADS", ["1"], ["0", "-2"], "greater than or equal to 1"),
    ("DICECAM_SECOND_LOOK", ["0", "640"], ["-1"], "greater than or equal to 0"),
    ("DICECAM_SECOND_LOOK_BELOW", ["0"], ["-1"], "greater than or equal to 0"),
    ("DICECAM_SECOND_LOOK_CONF", ["0", "1"], ["1.1"], "less than or equal to 1"),
    ("DICECAM_COCKED_THRESHOLD", ["0.01", "0.99"], ["0", "1"], "Input should be"),
    ("DICECAM_VERIFY_THRESHOLD", ["0.01", "0.99"], ["0", "1"], "Input should be"),
    ("DICECAM_UNSURE_BELOW", ["0", "1"], ["1.5"], "less than or equal to 1"),
    ("DICECAM_FIT_CONF", ["0", "1"], ["-0.1"], "greater than or equal to 0"),
    ("DICECAM_MAX_IMAGE_PIXELS", ["1"], ["0"], "greater than or equal to 1"),
    ("DICECAM_MAX_DECODED_PIXELS", ["1"], ["0"], "greater than or equal to 1"),
    ("DICECAM_IMGSZ", ["32", "640"], ["16", "100"], ""),
]


@pytest.mark.parametrize(("name", "taken", "refused", "says"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_each_bound_takes_its_edge_and_refuses_past_it(name, taken, refused, says, monkeypatch):
    field = name.removeprefix("DICECAM_").lower()
    for value in taken:
        monkeypatch.setenv(name, value)
        assert float(getattr(VisionSettings(), field)) == float(value)
    for value in refused:
        monkeypatch.setenv(name, value)
        with pytest.raises(ValidationError) as caught:
            VisionSettings()
        error = caught.value.errors()[0]
        assert error["loc"] == (field,) and says in error["msg"], (value, error)


def test_check_imgsz_refuses_sizes_under_the_stride_that_divide_it():
    """``dicecam read --imgsz`` is checked here, not by the setting's bound of 32."""
    from vision.config import check_imgsz

    assert check_imgsz(32) == 32 and check_imgsz(640) == 640
    for size in (0, -32, 16, 100):
        with pytest.raises(ValueError, match="^expected an input size that is a multiple of"):
            check_imgsz(size)


def test_shipped_files_come_from_the_package_where_a_wheel_put_them(tmp_path, monkeypatch):
    from vision import config

    package, checkout = tmp_path / "site" / "vision", tmp_path / "repo"
    (checkout / "models").mkdir(parents=True)
    package.mkdir(parents=True)
    monkeypatch.setattr(config, "_PACKAGE", package)
    monkeypatch.setattr(config, "CHECKOUT", checkout)
    assert config.shipped_folder("shipped_models", "models") == checkout / "models"
    (package / "shipped_models").mkdir()  # installed beside the code: that one, even in a clone
    assert config.shipped_folder("shipped_models", "models") == package / "shipped_models"
    monkeypatch.setattr(config, "CHECKOUT", None)
    assert config.shipped_folder("shipped_models", "models") == package / "shipped_models"
