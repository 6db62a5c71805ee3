"""The small progress bar's words that mutation testing found untested: the ETA as minutes and
seconds, a run of no photos, a shorter line redrawn over a longer one on a terminal."""

from __future__ import annotations

import importlib
import io
import types

from vision.labelling.progress import ProgressBar, progress

progress_module = importlib.import_module("vision.labelling.progress")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _clock(monkeypatch, *times: float) -> None:
    """time.monotonic() in the progress module gives ``times`` in turn."""
    ticks = iter(times)
    monkeypatch.setattr(
        progress_module, "time", types.SimpleNamespace(monotonic=lambda: next(ticks))
    )


def test_the_eta_and_elapsed_time_read_as_a_clock(monkeypatch):
    _clock(monkeypatch, 0.0, 0.0, 11.0, 3700.0)
    stream = io.StringIO()
    bar = ProgressBar(10, desc="label", stream=stream)
    bar.update(1)  # 11 s for the first of 10: 99 s to go
    bar.update(5)  # half done after 3700 s
    first, second = stream.getvalue().splitlines()[1:]
    assert first.endswith("1/10 0.1/s elapsed 0:11 ETA 1:39")
    assert second.endswith("5/10 0.0/s elapsed 1h01m ETA 1h01m")


def test_a_run_of_no_photos_shows_a_full_bar():
    stream = io.StringIO()
    assert list(progress([], total=0, desc="label", stream=stream)) == []
    (line,) = stream.getvalue().splitlines()
    assert line.startswith("label [" + "#" * 24 + "] 0/0 ")


def test_a_shorter_line_on_a_terminal_covers_the_longer_one_before(monkeypatch):
    _clock(monkeypatch, 0.0, 0.0, 0.2, 501.0)
    stream = Terminal()
    bar = ProgressBar(1000, desc="label", stream=stream)
    bar.update(500)  # 2500.0/s
    bar.update(501)  # 1.0/s: a shorter line
    shown = stream.getvalue().split("\r")[1:]
    assert len(shown[2].rstrip()) < len(shown[1])
    assert len(shown[2]) == len(shown[1])  # padded with spaces over what was there


def test_a_run_that_ends_early_on_a_terminal_ends_its_line():
    stream = Terminal()
    assert list(progress(range(3), total=5, desc="label", stream=stream)) == [0, 1, 2]
    shown = stream.getvalue()
    assert shown.endswith("\n") and " 3/5 " in shown.rsplit("\r", 1)[-1]


def test_a_fast_run_on_a_terminal_redraws_a_few_times_not_once_an_item():
    stream = Terminal()
    for _ in progress(range(2000), total=2000, desc="label", stream=stream):
        pass
    assert stream.getvalue().count("\r") < 100  # at most ten a second
