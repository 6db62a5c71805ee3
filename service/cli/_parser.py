"""The ``dicecam`` parser: argparse's, with the project's ways of taking values (numbers below
0, an option given once, no empty path, positionals among the options) and of saying a usage
error in one line."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["Parser", "given_path"]


def given_path(text: str) -> str:
    """A file or folder named on the command line, as typed; ArgumentTypeError for an empty one,
    which would name the current folder (``dicecam synth --out "$DIR"`` with DIR unset).

    Example:
        >>> given_path("roll.jpg")
        'roll.jpg'
    """
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got '' (write . for the current folder)")
    return text


def _path(text: str) -> Path:
    """``type=Path`` of every option (the parser's registry maps Path to it): :func:`given_path`."""
    return Path(given_path(text))


_NUMBERS = re.compile(r"^-\.?\d[\d.eE+-]*([,;]-?\.?\d[\d.eE+-]*)?$")
"""Values that start with '-' but are numbers or X,Y pairs (``-5``, ``-0.5``, ``-100,0``):
argparse took ``-100,0`` for an unknown option ("expected at least one argument")."""


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store`` action, refusing an option given twice (argparse keeps the last)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if option_string is not None and self.dest in given:
            first, again = given[self.dest], f"{option_string} {_shown(values)}"
            raise argparse.ArgumentError(self, f"expected once, got {first} and {again}")
        given[self.dest] = f"{option_string} {_shown(values)}"
        super().__call__(parser, namespace, values, option_string)


_GIVEN = "_dicecam_given"
"""The namespace attribute where :class:`_StoreOnce` notes the options given (removed after)."""


def _shown(values: Any) -> str:
    return " ".join(map(str, values)) if isinstance(values, list) else str(values)


class Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error in one line (argparse writes the usage first),
    numbers and X,Y pairs below 0 taken as values (:data:`_NUMBERS`), an option given twice
    refused (:class:`_StoreOnce`), an empty path refused (:func:`given_path`, for every
    ``type=Path``), positionals of many values taken among the options (:meth:`_intermixed`)
    and unrecognized arguments said by the subcommand that has them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NUMBERS
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self.register("type", Path, _path)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        positionals = self._get_positional_actions()
        args = sys.argv[1:] if args is None else list(args)
        if any(action.nargs in ("*", "+") for action in positionals) and not self._helped(args):
            parsed, extras = self._intermixed(args, positionals, namespace)
        else:
            parsed, extras = super().parse_known_args(args, namespace)
        parsed.__dict__.pop(_GIVEN, None)
        return parsed, extras

    def _helped(self, args: list[str]) -> bool:
        """Whether ``args`` ask for this parser's help (before any ``--``): argparse's own parse
        prints it, its usage line with the positionals :meth:`_intermixed` hides at first."""
        cut = args.index("--") if "--" in args else len(args)
        helps = {
            option
            for action in self._actions
            if isinstance(action, argparse._HelpAction)
            for option in action.option_strings
        }
        return any(arg in helps for arg in args[:cut])

    def _intermixed(
        self,
        args: list[str],
        positionals: list[argparse.Action],
        namespace: argparse.Namespace | None,
    ) -> tuple[argparse.Namespace, list[str]]:
        """Options first, then the positionals from wherever they stood (``dicecam read a.jpg
        --json b.jpg``; argparse left b.jpg unrecognized), all after ``--`` among them: Python
        3.11's ``parse_known_intermixed_args`` lost a ``--`` before them (``read -- -x.jpg``)."""
        cut = args.index("--") if "--" in args else len(args)
        kept = [(action, action.nargs, action.default) for action in positionals]
        try:  # options only: each positional takes none, its strings are left over
            for action in positionals:
                action.nargs = action.default = argparse.SUPPRESS
            namespace, rest = super().parse_known_args(args[:cut], namespace)
        finally:
            for action, nargs, default in kept:
                action.nargs, action.default = nargs, default
        unknown = [arg for arg in rest if self._parse_optional(arg) is not None]
        values = [arg for arg in rest if arg not in unknown]
        optionals = [(action, action.required) for action in self._get_optional_actions()]
        try:  # the positionals, the options given already (a required one too)
            for action, _ in optionals:
                action.required = False
            namespace, extras = super().parse_known_args([*values, *args[cut:]], namespace)
        finally:
            for action, required in optionals:
                action.required = required
        return namespace, [*unknown, *extras]

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse says them as the top parser's ("dicecam: error: ...")
            message = f"unrecognized arguments: {' '.join(extras)}"
            dashed = next((e for e in extras if e.startswith("-") and os.path.exists(e)), None)
            if dashed is not None:
                message += f" (a file whose name starts with '-': write ./{dashed})"
            _chosen(self, parsed).error(message)
        return parsed


def _chosen(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's parser that ``parsed`` came through: ``dicecam read``'s for read."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(parsed, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], parsed)
    return parser
