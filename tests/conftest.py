"""Shared fixtures. Paths to data outside the repository skip with a reason when absent."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

# ultralytics (the train extra) must never pip-install or phone home during tests.
os.environ["YOLO_AUTOINSTALL"] = "false"
os.environ.setdefault("YOLO_OFFLINE", "1")

# A run started in the background by a shell (`.ci/run &`, nohup) has SIGINT ignored, and every
# dicecam it starts would inherit that: the Ctrl-C tests need them to take it as a terminal's.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The browser tests wait on what the page shows. Playwright's 5 s is short on CI's two cores, each
# running a test process beside a chromium and a server: a wait that outlasts 15 s is a bug.
try:
    from playwright.sync_api import expect as _expect
except ImportError:  # the browser tests skip, saying why
    pass
else:
    _expect.set_options(timeout=15_000)

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
"""This test process's name: ``gw0``, ``gw1``, ... in a parallel run (``pytest -n 2``)."""

# The service's and the reader's data (turns, outbox, the tracker's database, the stored
# calibration) go to a folder of this test process, not to the user's ~/.dicecam: a test that
# builds an app without a data folder of its own neither reads what an earlier run or another
# worker left there nor leaves anything in the home folder.
DATA_DIR = Path(tempfile.mkdtemp(prefix=f"dicecam-tests-{WORKER}-"))
os.environ["DICECAM_DATA_DIR"] = str(DATA_DIR)

PILLOW_OPEN = Image.open
PRINT_OPTIONS = np.get_printoptions()

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ROBOFLOW = SHARED / "datasets" / "roboflow-dice"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def roboflow_eval() -> Path:
    path = ROBOFLOW / "eval"
    if not (path / "images").is_dir():
        pytest.skip(f"real photo set not found at {path} (it lives in ../shared, outside the repo)")
    return path


@pytest.fixture(scope="session")
def rules_dir() -> Path:
    path = SHARED / "rules"
    if not path.is_dir():
        pytest.skip(f"rule texts not found at {path}")
    return path


@pytest.fixture(autouse=True)
def _process_wide_state() -> Iterator[None]:
    """Each test starts with Pillow's own ``Image.open`` and numpy's print options, whatever
    the tests before it in this process did: importing ultralytics (a test of training, export
    or the CLI, or a module importing it at collection) patches ``Image.open`` (an unreadable
    photo then wants pi-heif) and sets numpy's float format, and a later test failed or passed
    by the order the tests ran in, serially or spread over ``pytest -n`` workers."""
    Image.open = PILLOW_OPEN
    if np.get_printoptions() != PRINT_OPTIONS:
        np.set_printoptions(**PRINT_OPTIONS)
    _reopen_log_streams()
    settings = {k: v for k, v in os.environ.items() if k.startswith("DICECAM_")}
    yield
    # ... and ends with the DICECAM_ variables it started with: ``main(["serve", "--model",
    # M])`` run in process sets DICECAM_MODEL for the app, and later tests read it as the
    # user's (a message then said "(named by DICECAM_MODEL)" twice over)
    for name in [k for k in os.environ if k.startswith("DICECAM_") and k not in settings]:
        del os.environ[name]
    os.environ.update(settings)


def _reopen_log_streams() -> None:
    """Point at this test's output the log handlers left writing to an earlier test's captured
    output, closed since: ultralytics' logger takes ``sys.stdout`` when it is imported, and a
    later test's warning from it printed "--- Logging error --- ... ValueError: I/O operation
    on closed file" with a traceback into that test's stderr."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", ()):
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and getattr(stream, "closed", False):
                handler.stream = sys.stdout  # not setStream: it flushes the closed one first


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(DATA_DIR, ignore_errors=True)
