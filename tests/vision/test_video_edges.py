"""vision.video at its edges: the sampling and settling arguments refused, the frame count a
truncated clip names, a clip with no frame at all, frames exactly at the decode limit, what
same_roll takes for still (tiny dice, exactly a quarter of a die, a die gone off the table),
a bool given as the source, and a duration known only with a frame count. Clips are written
here with OpenCV (MJPG in .avi)."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import DiceReader, Reading, VideoError, VideoInfo, same_roll, settled_rolls
from vision.types import Die
from vision.video import video_frames

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"


def _clip(path: Path, n: int, *, fps: float = 10) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build writes no MJPG video")
    noise = np.random.default_rng(7)
    for _ in range(n):
        writer.write(noise.integers(0, 256, (48, 64, 3), np.uint8))  # a few kB a frame
    writer.release()
    return path


@pytest.mark.parametrize("every_s", [0, -0.1, math.nan])
def test_a_sampling_interval_not_above_0_is_refused(tmp_path, every_s):
    clip = _clip(tmp_path / "clip.avi", 3)
    with pytest.raises(ValueError, match="expected every_s above 0 seconds, got"):
        next(video_frames(clip, every_s=every_s))


@pytest.mark.parametrize("settle_s", [0, -1, math.nan])
def test_a_settling_time_not_above_0_is_refused(tmp_path, settle_s):
    clip = _clip(tmp_path / "clip.avi", 3)
    with pytest.raises(ValueError, match="expected settle_s above 0 seconds, got"):
        next(settled_rolls(object(), clip, settle_s=settle_s))  # refused before any reading


def test_a_truncated_clip_names_how_many_frames_did_decode(tmp_path):
    clip = _clip(tmp_path / "clip.avi", 20)
    data = clip.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: len(data) - len(data) // 4])  # about the last 5 frames lost
    got = []
    with pytest.raises(
        VideoError, match=r"cut\.avi: the video stops at frame (\d+) of the 20"
    ) as e:
        for frame in video_frames(cut):
            got.append(frame.index)
    assert 0 < len(got) < 19 and got == list(range(len(got)))
    assert f"stops at frame {len(got)} of the 20 " in str(e.value)


def test_a_clip_whose_frames_are_all_cut_off_says_no_frame_decodes(tmp_path):
    clip = _clip(tmp_path / "clip.avi", 20)
    data = clip.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: data.index(b"movi") + 4])  # the header, and no frame after it
    info = VideoInfo.from_video_path(cut)
    assert info.total_frames == 20
    with pytest.raises(VideoError, match=r"cut\.avi: no frame decodes"):
        next(video_frames(cut))


def test_frames_exactly_at_the_decode_limit_are_read(tmp_path, monkeypatch):
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    monkeypatch.setenv("DICECAM_MAX_DECODED_PIXELS", str(64 * 48))
    clip = _clip(tmp_path / "clip.avi", 8)
    assert list(settled_rolls(DiceReader(MODEL), clip)) == []  # read, no dice: no roll


def test_still_allows_3_px_for_tiny_dice_and_exactly_a_quarter_of_a_die():
    tiny = Reading(640, 480, [Die(5, (100, 100, 108, 108), 0.9)])  # 8 px: a quarter is 2 px
    nudged = Reading(640, 480, [Die(5, (102.5, 100, 110.5, 108), 0.9)])
    assert same_roll(tiny, nudged)
    assert not same_roll(tiny, Reading(640, 480, [Die(5, (103.5, 100, 111.5, 108), 0.9)]))
    big = Reading(640, 480, [Die(5, (100, 100, 140, 140), 0.9)])  # 40 px: a quarter is 10 px
    assert same_roll(big, Reading(640, 480, [Die(5, (110, 100, 150, 140), 0.9)]))


def test_a_die_that_went_off_the_table_is_not_the_same_roll():
    on = Reading(640, 480, [Die(5, (100, 100, 140, 140), 0.9)])
    off = Reading(640, 480, [Die(5, (100, 100, 140, 140), 0.9, on_table=False)])
    assert not same_roll(on, off)


def test_a_bool_is_not_taken_for_a_camera_index():
    with pytest.raises(VideoError, match="expected a video file or a camera index, got bool"):
        next(video_frames(True))


def test_a_duration_needs_a_frame_count_and_a_frame_rate():
    assert VideoInfo(640, 480, 30.0, 60).duration_s == 2.0
    assert VideoInfo(640, 480, 30.0, 0).duration_s is None  # a camera: no count
    assert VideoInfo(640, 480, 0.0, 60).duration_s is None
