"""Videos that cannot be read, made here as a user gets them: an MP4 written by OpenCV and cut
short (a copy stopped mid-way), a file of zeros named as a video, and a video whose header is
whole but whose frames do not decode (their bytes overwritten; a raw MJPEG stream, which
declares no frame count), one that stops a frame or two short of its header, and a name too long
to open. Each is a VideoError naming the file, what was expected and what came; ``dicecam read``
says so on the file's line and reads the other files of the batch (photos and a clip) as if it
were not there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from service.cli import main
from vision import VideoError, VideoInfo, video_frames

from dicecam_testing.video import write_clip

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"
SAMPLES = REPO / "datasets" / "samples"
TRUTH = json.loads((SAMPLES / "truth.json").read_text(encoding="utf-8"))
A, B = "roll-s21-009.jpg", "roll-s21-035.jpg"


def noise(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (48, 64, 3), np.uint8) for _ in range(n)]


def cut_mp4(path: Path) -> Path:
    """An MP4 of 20 frames cut at 90%: its index (moov), written last, is lost."""
    data = write_clip(path.with_name("whole.mp4"), noise(20), fourcc="mp4v").read_bytes()
    assert data.rfind(b"moov") > len(data) * 0.9  # what this test relies on
    path.write_bytes(data[: len(data) * 9 // 10])
    return path


def zeros(path: Path) -> Path:
    path.write_bytes(bytes(64 * 1024))
    return path


def undecodable_avi(path: Path, first_bad: int = 0) -> Path:
    """An MJPG AVI of 20 frames whose header and index are whole, and whose frames from
    ``first_bad`` on hold zeros where their JPEG data was."""
    data = bytearray(write_clip(path, noise(20), fourcc="MJPG").read_bytes())
    movi, idx1 = data.index(b"movi"), data.index(b"idx1")
    chunks = [movi + m.start() for m in re.finditer(rb"00dc", bytes(data[movi:idx1]))]
    assert len(chunks) == 20
    for start in chunks[first_bad:]:
        size = int.from_bytes(data[start + 4 : start + 8], "little")
        body = start + 8 + 2  # past the chunk's header and the JPEG's start marker
        data[body : start + 8 + size] = bytes(start + 8 + size - body)
    path.write_bytes(bytes(data))
    return path


def undecodable_mp4(path: Path) -> Path:
    """An MP4 whose index is whole and whose frame data (mdat) is all zeros."""
    data = bytearray(write_clip(path, noise(20), fourcc="mp4v").read_bytes())
    mdat, moov = data.index(b"mdat"), data.rindex(b"moov")
    data[mdat + 4 : moov - 4] = bytes(moov - 4 - mdat - 4)
    path.write_bytes(bytes(data))
    return path


def frames_of(path: Path) -> tuple[list[int], VideoError]:
    got: list[int] = []
    with pytest.raises(VideoError) as e:
        for frame in video_frames(path):
            got.append(frame.index)
    return got, e.value


def test_an_mp4_cut_short_is_not_a_video_opencv_can_open(tmp_path):
    path = cut_mp4(tmp_path / "cut.mp4")
    got, error = frames_of(path)
    assert got == []
    assert str(error) == (
        f"{path}: not a video OpenCV can open (expected MP4, MOV, AVI, MKV, WebM, ...; "
        "or a truncated or corrupt one)"
    )


@pytest.mark.parametrize("suffix", [".mp4", ".mkv", ".avi"])
def test_a_file_of_zeros_named_as_a_video_is_not_one(tmp_path, suffix):
    path = zeros(tmp_path / f"zeros{suffix}")
    got, error = frames_of(path)
    assert got == []
    assert str(error).startswith(f"{path}: not a video OpenCV can open (expected MP4, ")
    with pytest.raises(VideoError, match=re.escape(f"{path}: not a video")):
        VideoInfo.from_video_path(path)


@pytest.mark.parametrize("make", [undecodable_avi, undecodable_mp4])
def test_a_video_whose_frames_do_not_decode_says_how_many_its_header_declares(tmp_path, make):
    path = make(tmp_path / f"bad.{'avi' if make is undecodable_avi else 'mp4'}")
    assert VideoInfo.from_video_path(path).total_frames == 20  # the header opens
    got, error = frames_of(path)
    assert got == []
    assert str(error) == (
        f"{path}: no frame decodes, of the 20 its header declares (truncated or corrupt)"
    )


def test_a_video_corrupt_from_a_frame_on_gives_the_frames_before_then_stops(tmp_path):
    path = undecodable_avi(tmp_path / "bad.avi", first_bad=5)
    got, error = frames_of(path)
    assert got == [0, 1, 2, 3, 4]
    assert str(error) == (
        f"{path}: the video stops at frame 5 of the 20 its header declares (truncated or corrupt)"
    )


def test_a_raw_mjpeg_stream_whose_frames_do_not_decode_says_so_with_no_count(tmp_path):
    # A raw .mjpeg stream (as some webcams record) declares no frame count: nothing to compare.
    jpegs = [cv2.imencode(".jpg", frame)[1].tobytes() for frame in noise(20)]
    path = tmp_path / "webcam.mjpeg"
    path.write_bytes(b"".join(j[:2] + bytes(len(j) - 4) + j[-2:] for j in jpegs))
    assert VideoInfo.from_video_path(path).total_frames == 0
    got, error = frames_of(path)
    assert got == []
    assert str(error) == f"{path}: no frame decodes (an empty, truncated or corrupt video)"


def test_a_video_one_frame_short_of_its_header_reads_and_two_short_is_an_error(tmp_path):
    # Some containers' counts are estimates: one frame short is taken, two are a cut video.
    one_short = undecodable_avi(tmp_path / "one.avi", first_bad=19)
    assert [f.index for f in video_frames(one_short)] == list(range(19))
    got, error = frames_of(undecodable_avi(tmp_path / "two.avi", first_bad=18))
    assert got == list(range(18))
    assert "two.avi: the video stops at frame 18 of the 20 its header declares" in str(error)


def test_a_video_whose_name_is_too_long_to_open_is_an_error_naming_it(tmp_path):
    path = tmp_path / f"{'roll' * 70}.mp4"  # past the 255 bytes a file's name may have
    got, error = frames_of(path)
    assert got == []
    assert str(error) == f"cannot read {path}: File name too long"


def test_dicecam_read_says_each_bad_video_and_reads_the_rest_of_the_batch(tmp_path, capsys):
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    roll = cv2.imread(str(SAMPLES / A))
    clip = write_clip(
        tmp_path / "roll.avi", [np.full_like(roll, 90)] * 2 + [roll] * 6, fourcc="MJPG"
    )
    bad = {
        "cut": cut_mp4(tmp_path / "cut.mp4"),
        "zeros": zeros(tmp_path / "zeros.mkv"),
        "frames": undecodable_avi(tmp_path / "frames.avi"),
    }
    batch = [SAMPLES / A, bad["cut"], bad["zeros"], bad["frames"], clip, SAMPLES / B]

    code = main(["read", "--model", str(MODEL), "--json", *map(str, batch)])

    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 1
    assert [line["image"] for line in lines] == list(map(str, batch))
    assert sorted(d["value"] for d in lines[0]["dice"]) == sorted(TRUTH[A]["values"])
    assert sorted(d["value"] for d in lines[5]["dice"]) == sorted(TRUTH[B]["values"])
    assert (lines[4]["frame"], sorted(d["value"] for d in lines[4]["dice"])) == (
        2,
        sorted(TRUTH[A]["values"]),
    )
    errors = {name: lines[i]["error"] for i, name in enumerate(bad, start=1)}
    assert errors["cut"].startswith(f"{bad['cut']}: not a video OpenCV can open (expected MP4")
    assert errors["zeros"].startswith(f"{bad['zeros']}: not a video OpenCV can open")
    assert errors["frames"] == (
        f"{bad['frames']}: no frame decodes, of the 20 its header declares (truncated or corrupt)"
    )
    said = captured.err.splitlines()
    for error in errors.values():
        assert f"dicecam read: {error}" in said
    assert "Traceback" not in captured.err
