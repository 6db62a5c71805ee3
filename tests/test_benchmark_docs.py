"""The benchmark commands the docs (README.md, docs/, models/, datasets/) quote name scripts and
options that exist.

Static: the scripts are read, not run (tests/benchmarks is out of the default test run).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "tests" / "benchmarks"
DOCS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "models").glob("*.md")),
    *sorted((REPO / "datasets").rglob("*.md")),
]

# a code span naming a benchmark script, and the rest of the span (its options)
COMMAND = re.compile(r"`([^`]*?)\b(bench_\w+)\.py([^`]*)`")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def quoted_commands() -> list[tuple[str, str, list[str]]]:
    """(where, script name, options) of every quoted benchmark command."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in COMMAND.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            out.append((f"{doc.name}:{line}", m.group(2), OPTION.findall(m.group(3))))
    return out


def test_the_docs_quote_benchmark_commands() -> None:
    scripts = {name for _, name, _ in quoted_commands()}
    assert {"bench_reader", "bench_api", "bench_tracker", "bench_finetune"} <= scripts


@pytest.mark.parametrize(("where", "script", "options"), quoted_commands())
def test_a_quoted_benchmark_command_runs_as_written(
    where: str, script: str, options: list[str]
) -> None:
    path = BENCHMARKS / f"{script}.py"
    assert path.is_file(), f"{where}: no script {path.relative_to(REPO)}"
    source = path.read_text()
    missing = [o for o in options if f'"{o}"' not in source]
    assert not missing, f"{where}: {script}.py has no option {', '.join(missing)}"
