"""The suite runs serially (``pytest``) and in parallel (``pytest -n 2``): each test process keeps
its data to itself and out of the user's home folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
