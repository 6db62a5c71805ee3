"""The ``dicecam`` parser's own ways at their edges: a help flag after ``--`` is a file's name,
and an option written ``action="store"`` is refused twice as one with no action is."""

from __future__ import annotations

import pytest

from service.cli import build_parser
from service.cli._parser import Parser


def test_a_help_flag_after_the_double_dash_is_a_photo_among_the_others():
    """``dicecam read a.jpg --json -- -h`` reads a.jpg and the file ``-h``: a help flag seen
    past ``--`` took argparse's own parse, which left ``-h`` unrecognized (exit 2)."""
    parsed = build_parser().parse_args(["read", "a.jpg", "--json", "--", "-h"])
    assert parsed.photos == ["a.jpg", "-h"] and parsed.json is True


def test_an_option_stored_explicitly_is_refused_when_given_twice(capsys):
    parser = Parser(prog="dicecam x")
    parser.add_argument("--size", action="store", type=int)
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args(["--size", "1", "--size", "2"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        "dicecam x: error: argument --size: expected once, got --size 1 and --size 2 "
        "(see dicecam x --help)\n"
    )
