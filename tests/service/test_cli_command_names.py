"""A nested command's errors name the command as typed (``dicecam labels convert: error: ...``),
whether argparse refused the usage or the command failed as it ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["labels", "import", "{missing}", "--out", "{out}"], "dicecam labels import"),
        (
            ["labels", "convert", "{missing}", "--to", "coco", "--out", "{out}"],
            "dicecam labels convert",
        ),
        (["outbox", "deliver", "--outbox-dir", "{out}", "--player", "ann"], "dicecam outbox"),
    ],
)
def test_a_runtime_error_names_the_command_as_its_usage_errors_do(
    argv: list[str], command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {"missing": str(tmp_path / "missing"), "out": str(tmp_path / "out")}
    argv = [arg.format(**paths) for arg in argv]
    with pytest.raises(SystemExit) as refused:  # argparse's usage error
        main([*argv, "--bogus"])
    assert refused.value.code == 2
    usage = _one_line(capsys)
    assert usage.startswith(f"{command}: error: unrecognized arguments: --bogus"), usage
    assert main(argv) == 2  # parsed, then refused by the command itself
    ran = _one_line(capsys)
    assert ran.startswith(f"{command}: error: "), ran
    assert "unrecognized" not in ran
    assert not (tmp_path / "out").exists()  # nothing written
