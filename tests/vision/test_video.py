"""Videos of rolls: frames sampled from real clips written here with OpenCV (MJPG in .avi, mp4v in
.mp4) from the committed sample photos, each roll reported once when its dice are at rest, with
the values ``datasets/samples/truth.json`` gives; files that are not videos; ``dicecam read`` of a
clip. The shipped reader reads the frames (about 40 ms a frame on 2 cores)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from service.cli import main
from vision import (
    DiceReader,
    Reading,
    VideoError,
    VideoInfo,
    same_roll,
    settled_rolls,
    video_frames,
)
from vision.types import Die

from dicecam_testing.cli import DICECAM, ROOT, interrupt_when
from dicecam_testing.video import write_clip

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"
SAMPLES = REPO / "datasets" / "samples"
TRUTH = json.loads((SAMPLES / "truth.json").read_text(encoding="utf-8"))
A, B, C = "roll-s21-009.jpg", "roll-s21-035.jpg", "roll-s21-028.jpg"
FORMATS = [("MJPG", ".avi"), ("mp4v", ".mp4")]


def photo(name: str) -> np.ndarray:
    return cv2.imread(str(SAMPLES / name))


def blank(n: int) -> list[np.ndarray]:
    """A hand over the table: no dice."""
    return [np.full((480, 640, 3), 90, np.uint8)] * n


def sliding(name: str, shifts: Sequence[int]) -> list[np.ndarray]:
    """The dice of a photo still sliding: the same values, their boxes moving."""
    return [np.roll(photo(name), dx, axis=1) for dx in shifts]


def values(name: str) -> list[int]:
    return sorted(TRUTH[name]["values"])


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    return DiceReader(MODEL)


@pytest.mark.parametrize(("fourcc", "suffix"), FORMATS)
def test_each_roll_is_reported_once_at_the_frame_its_dice_came_to_rest(
    reader, tmp_path, fourcc, suffix
):
    frames = [
        *blank(2),
        *[photo(C)] * 4,  # still for 0.3 s only: not a roll
        *blank(1),
        *sliding(A, [160, 80, 40, 20]),  # thrown: sliding to rest, values read all the way
        *[photo(A)] * 6,  # at rest from frame 11 (1.1 s) for 0.5 s: the first roll
        *blank(2),  # a hand passes over the dice ...
        *[photo(A)] * 6,  # ... which are still where they were: the same roll
        *[cv2.GaussianBlur(f, (15, 15), 0) for f in sliding(B, [80, 40])],  # thrown again
        *[photo(B)] * 6,  # at rest from frame 27 (2.7 s)
    ]
    clip = write_clip(tmp_path / f"roll{suffix}", frames, fourcc=fourcc)

    rolls = list(settled_rolls(reader, clip))

    assert [(r.frame, r.time_s, sorted(r.reading.values)) for r in rolls] == [
        (11, pytest.approx(1.1), values(A)),
        (27, pytest.approx(2.7), values(B)),
    ]
    assert all(r.reading.image == str(clip) and r.held_s >= 0.5 for r in rolls)
    assert rolls[0].bgr.shape == (480, 640, 3)
    d = rolls[1].to_dict()
    assert list(d)[:5] == ["image", "frame", "time_s", "width", "height"]
    assert (d["frame"], d["time_s"], len(d["dice"])) == (27, 2.7, len(values(B)))


class CountingReader:
    """The reader, counting the frames it reads."""

    def __init__(self, reader: DiceReader) -> None:
        self.reader, self.settings, self.reads = reader, reader.settings, 0

    def read(self, image: np.ndarray, *, expected_dice: int | None = None) -> Reading:
        self.reads += 1
        return self.reader.read(image, expected_dice=expected_dice)


def test_a_30_fps_clip_is_read_at_a_frame_every_100_ms(reader, tmp_path):
    clip = write_clip(tmp_path / "roll.avi", [*blank(6), *[photo(A)] * 24], fps=30)  # 1 s
    counting = CountingReader(reader)

    rolls = list(settled_rolls(counting, clip, every_s=0.1, settle_s=0.5))

    assert counting.reads == 10  # frames 0, 3, ..., 27
    assert [(r.frame, r.time_s, sorted(r.reading.values)) for r in rolls] == [
        (6, pytest.approx(0.2), values(A))
    ]


def test_video_frames_sample_by_stride_or_by_time(tmp_path):
    clip = write_clip(tmp_path / "clip.avi", blank(30), fps=30)
    assert VideoInfo.from_video_path(clip) == VideoInfo(640, 480, 30.0, 30)
    assert [f.index for f in video_frames(clip, stride=7)] == [0, 7, 14, 21, 28]
    frames = list(video_frames(clip, every_s=0.25))
    assert [f.index for f in frames] == [0, 8, 15, 23]  # the first frame at or after each 0.25 s
    assert [f.time_s for f in frames] == pytest.approx([0, 8 / 30, 0.5, 23 / 30])
    with pytest.raises(ValueError, match="stride of 1 or more, got 0"):
        next(video_frames(clip, stride=0))


def test_frames_over_the_readers_decode_limit_are_an_error_before_any_is_read(tmp_path):
    clip = write_clip(tmp_path / "roll.avi", blank(3))

    class Limited:
        settings = SimpleNamespace(max_decoded_pixels=640 * 480 - 1)

        def read(self, *args, **kwargs):
            raise AssertionError("a frame over the limit was read")

    expected = r"roll\.avi: frames of 640x480 pixels, over the 307199 a reading may decode"
    with pytest.raises(VideoError, match=expected):
        next(settled_rolls(Limited(), clip))


def test_a_truncated_video_gives_its_rolls_then_an_error_naming_it(reader, tmp_path):
    clip = write_clip(tmp_path / "roll.avi", [*[photo(A)] * 6, *blank(10)])
    data = clip.read_bytes()
    cut = tmp_path / "cut.avi"
    blank_frames = len(cv2.imencode(".jpg", blank(1)[0])[1]) * 10
    cut.write_bytes(data[: len(data) - blank_frames // 2])  # half the blank frames lost

    rolls = settled_rolls(reader, cut)
    first = next(rolls)
    assert (first.frame, sorted(first.reading.values)) == (0, values(A))
    with pytest.raises(VideoError, match=r"cut\.avi: the video stops at frame \d+ of the 16"):
        next(rolls)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", r"empty file: .*bad\.mp4 \(0 bytes\)"),
        (b"these are my notes, not a clip\n" * 20, r"bad\.mp4: not a video OpenCV can open"),
        ("half an mp4", r"bad\.mp4: not a video OpenCV can open"),
        (None, r"no such file: .*bad\.mp4"),
    ],
)
def test_a_file_that_is_not_a_video_is_an_error_naming_it(tmp_path, content, expected):
    path = tmp_path / "bad.mp4"
    if content == "half an mp4":  # its index (moov) is written at the end: cut off
        data = write_clip(tmp_path / "whole.mp4", blank(10), fourcc="mp4v").read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(VideoError, match=expected):
        next(video_frames(path))
    with pytest.raises(VideoError, match=expected):
        VideoInfo.from_video_path(path)


def test_a_folder_or_a_camera_that_does_not_open_is_an_error(tmp_path):
    with pytest.raises(VideoError, match="expected a video file, got a directory"):
        next(video_frames(tmp_path))
    if hasattr(os, "mkfifo"):  # a pipe no one writes to: opening it would wait for ever
        os.mkfifo(tmp_path / "pipe.mp4")
        with pytest.raises(
            VideoError, match=r"expected a video file, got a pipe or device: .*pipe"
        ):
            next(video_frames(tmp_path / "pipe.mp4"))
    with pytest.raises(VideoError, match="no camera opens at index 99"):
        next(video_frames(99))
    with pytest.raises(VideoError, match="camera index of 0 or more, got -1"):
        next(video_frames(-1))


def test_a_video_whose_name_is_not_utf8_is_read(tmp_path):
    """Latin-1 bytes in a name (a zip made on Windows): OpenCV's binding crashed on such a str."""
    clip = write_clip(tmp_path / "clip.avi", blank(5))
    latin1 = tmp_path / os.fsdecode(b"w\xfcrfel.avi")
    clip.rename(latin1)
    assert [f.index for f in video_frames(latin1)] == [0, 1, 2, 3, 4]
    assert VideoInfo.from_video_path(latin1).total_frames == 5
    assert list(tmp_path.iterdir()) == [latin1]


def test_same_roll_needs_the_same_dice_values_and_places():
    a = Reading(640, 480, [Die(5, (100, 100, 140, 140), 0.9), Die(2, (300, 100, 340, 140), 0.9)])

    def moved(dx: float = 0, value: int = 5, cocked: bool = False) -> Reading:
        first = Die(value, (100 + dx, 100, 140 + dx, 140), 0.8, cocked=cocked)
        return Reading(640, 480, [a.dice[1], first])

    assert same_roll(a, moved(dx=9))  # under a quarter of a die: compression, a wobble
    assert not same_roll(a, moved(dx=11))
    assert not same_roll(a, moved(dx=400))  # as many dice, but one matches no die of the other
    assert not same_roll(a, moved(value=6))
    assert not same_roll(a, moved(cocked=True))
    assert not same_roll(a, Reading(640, 480, a.dice[:1]))


def test_dicecam_read_a_clip_prints_each_settled_roll(reader, tmp_path, capsys):
    clip = write_clip(tmp_path / "roll.avi", [*blank(2), *[photo(A)] * 6])
    bare = tmp_path / "clip"  # no suffix: not an image, opens as a video
    bare.write_bytes(clip.read_bytes())
    notes = tmp_path / "notes.mp4"
    notes.write_text("not a clip")
    out = tmp_path / "annotated"
    args = ["read", "--model", str(MODEL), "--json", "--expect", "5", "--annotate", str(out)]

    code = main([*args, str(clip), str(notes), str(bare)])

    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 1  # for notes.mp4: the clips around it are read
    assert [(r["image"], r.get("frame"), r.get("time_s")) for r in lines] == [
        (str(clip), 2, 0.2),
        (str(notes), None, None),
        (str(bare), 2, 0.2),
    ]
    for roll in (lines[0], lines[2]):
        assert (roll["width"], roll["height"], roll["expected_dice"]) == (640, 480, 5)
        assert sorted(d["value"] for d in roll["dice"]) == values(A)
    assert "not a video OpenCV can open" in lines[1]["error"]
    assert f"dicecam read: {notes}: not a video" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["clip-frame000002.jpg", "roll-frame000002.jpg"]
    assert cv2.imread(str(out / "roll-frame000002.jpg")).shape == (480, 640, 3)


def test_dicecam_read_summary_of_a_clip_and_of_one_without_a_roll(reader, tmp_path, capsys):
    clip = write_clip(tmp_path / "roll.avi", [*blank(1), *[photo(B)] * 6])
    still = write_clip(tmp_path / "empty.avi", blank(8))

    assert main(["read", "--model", str(MODEL), str(clip), str(still)]) == 0

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{clip} at 0.10 s (frame 1): {len(values(B))} dice, values ")
    assert out[1] == f"{still}: no roll came to rest (dice still for 500 ms)"


def test_dicecam_read_camera_not_there_is_a_usage_error(capsys):
    assert main(["read", "--camera", "99"]) == 2
    assert capsys.readouterr().err.strip() == "dicecam read: error: no camera opens at index 99"
    assert main(["read"]) == 2
    assert capsys.readouterr().err == (
        "dicecam read: error: the following arguments are required: PHOTO, or --camera INDEX "
        "(see dicecam read --help)\n"
    )


def test_ctrl_c_while_a_clip_is_read_exits_130_with_one_line(tmp_path):
    rolls = [*blank(2), *[photo(A)] * 6, *blank(2), *[photo(B)] * 6] * 10
    clip = write_clip(tmp_path / "rolls.avi", rolls)
    proc = subprocess.Popen(
        [*DICECAM, "read", "--json", "--model", str(MODEL), str(clip)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    first: list[str] = []
    out, err = interrupt_when(proc, lambda: first.append(proc.stdout.readline()) or first[0])
    assert proc.returncode == 130
    assert err == "dicecam read: interrupted\n"
    lines = [json.loads(line) for line in (first[0] + out).splitlines()]
    assert 1 <= len(lines) < 20 and all(line["frame"] is not None for line in lines)
