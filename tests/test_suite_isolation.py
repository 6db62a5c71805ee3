"""The suite runs serially (``pytest``) and in parallel (``pytest -n 2``): each test process keeps
its data to itself and out of the user's home folder."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, UnidentifiedImageError

from service.settings import Settings
from vision.table.calibration import TableSettings


def test_the_service_and_the_reader_keep_their_data_in_this_test_process_folder() -> None:
    home = Path.home() / ".dicecam"
    folders = {Path(Settings().data_dir), Path(TableSettings().data_dir)}
    assert len(folders) == 1, folders
    (folder,) = folders
    assert folder != home and folder.is_dir(), folder
    assert folder.parent == Path(tempfile.gettempdir()), folder
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    assert folder.name.startswith(f"dicecam-tests-{worker}-"), folder


def test_a_test_that_patches_pillow_and_numpy_as_importing_ultralytics_does() -> None:
    """The first of a pair: what ``import ultralytics`` does to the process (its patches module
    and ``ultralytics.utils``), done by hand; the next test must not see it."""

    def open_wanting_pi_heif(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'pi_heif'")

    Image.open = open_wanting_pi_heif
    np.set_printoptions(linewidth=320, formatter={"float_kind": "{:11.5g}".format})
    assert repr(np.array([1 / 3])) == "array([    0.33333])"


def test_the_next_test_gets_pillow_and_numpy_as_they_were() -> None:
    assert repr(np.array([1 / 3])) == "array([0.33333333])"
    with pytest.raises(UnidentifiedImageError):
        Image.open(io.BytesIO(b"not an image"))
