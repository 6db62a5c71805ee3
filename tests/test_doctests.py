"""The ``>>>`` examples in the docstrings of vision, scoring and service run, and say the truth.

Each module's examples run as ``python -m pytest --doctest-modules`` runs them, from the
repository root (the examples' paths, such as ``datasets/samples/``, are relative to it). A module
that imports the ``[train]`` extra (torch, ultralytics) skips where that extra is not installed.
Importing every module starts no thread and opens no socket (no server, no download), and each
package's ``__all__`` names what it holds.
"""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from dicecam_testing.cli import ROOT

PACKAGES = ("vision", "scoring", "service")
OPTIONAL = {"torch", "torchvision", "ultralytics", "onnx", "onnxslim", "psycopg", "pillow_heif"}
"""Top-level modules of the optional extras (``[train]``, ``[postgres]``, ``[heif]``)."""


def _module_names() -> list[str]:
    """Every module of the packages but alembic's migration scripts (they run on import) and
    ``__main__`` (it runs the CLI)."""
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts or parts[-1] == "__main__":
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _module_names()


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional {exc.name} (pip install -e '.[test]')")
        raise


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _import(name)
    monkeypatch.chdir(ROOT)
    runner = doctest.DocTestRunner()
    report: list[str] = []
    tests = doctest.DocTestFinder().find(module, name)
    failed = sum(runner.run(test, out=report.append).failed for test in tests)
    assert failed == 0, "".join(report)


def test_modules_found() -> None:
    """The walk finds the modules (a wrong root would make every example pass unseen)."""
    assert {"vision.reader", "scoring.turn", "service.app", "vision.table.surface"} <= set(MODULES)
    assert not [m for m in MODULES if "migrations" in m or m.endswith("__main__")]


IMPORT_ALL = """
import importlib, socket, sys, threading

def refuse(*args, **kwargs):
    raise AssertionError(f"a socket was opened on import: {args}")

socket.socket.connect = socket.socket.bind = refuse
socket.create_connection = refuse
before = {t.ident for t in threading.enumerate()}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name.split(".")[0] not in OPTIONAL:
            raise
started = [t.name for t in threading.enumerate() if t.ident not in before]
assert not started, f"threads started on import: {started}"
"""


def test_imports_start_nothing() -> None:
    """Importing every module (what collecting the doctests does) opens no socket, starts no
    thread and prints nothing."""
    code = f"OPTIONAL = {sorted(OPTIONAL)!r}\n{IMPORT_ALL}"
    done = subprocess.run(
        [sys.executable, "-c", code, *MODULES],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name: str) -> None:
    """Each module says what it exports (``__all__``), and every name it lists is there; a
    package's public imports are all in its ``__all__``."""
    module = _import(name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{name} has no __all__"
    assert len(set(names)) == len(names), f"{name}.__all__ lists a name twice: {names}"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what {name} does not hold: {missing}"
    if Path(module.__file__).name == "__init__.py":
        imported = [
            n
            for n, value in vars(module).items()
            if not n.startswith("_")
            and getattr(value, "__module__", "").startswith(f"{name}.")
            and n not in names
        ]
        assert not imported, (
            f"{name} imports {imported} from its modules but leaves them out of __all__"
        )
