"""vision.annotate (``dicecam read --annotate``): each die boxed in its state's colour where the
reading puts it on the photo, its label, the summary, the outline, and the copy written."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.annotate import COLOURS, annotate, save_annotated
from vision.types import Die, Reading


def _is(img: np.ndarray, x: int, y: int, colour: tuple[int, int, int]) -> bool:
    """Whether the pixel is ``colour`` (within the antialiasing of a 1 px line)."""
    return int(np.abs(img[y, x].astype(int) - colour).max()) < 30


def _texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts annotate draws (cv2.putText still draws them)."""
    drawn: list[str] = []
    real = cv2.putText

    def spy(img, text, *args, **kwargs):  # noqa: ANN001, ANN202
        drawn.append(text)
        return real(img, text, *args, **kwargs)

    monkeypatch.setattr(cv2, "putText", spy)
    return drawn


def test_each_die_is_boxed_in_its_state_colour_and_off_the_table_wins():
    photo = np.zeros((200, 300, 3), np.uint8)
    dice = [
        Die(2, (20, 60, 50, 90), 0.97),
        Die(4, (70, 60, 100, 90), 0.9, on_table=False),
        Die(3, (120, 60, 150, 90), 0.8, on_table=False, cocked=True),  # off and leaning: red
        Die(6, (170, 60, 200, 90), 0.8, cocked=True),
        Die(5, (20, 130, 50, 160), 0.9, unsure=True),
        Die(1, (70, 130, 100, 160), 0.1, faint=True),
    ]
    drawn = annotate(photo, Reading(300, 200, dice))
    want = ["table", "off_table", "off_table", "cocked", "faint", "faint"]
    for die, state in zip(dice, want, strict=True):
        x1, y1, _, y2 = (round(v) for v in die.box)
        assert _is(drawn, x1, (y1 + y2) // 2, COLOURS[state]), (die, state)


def test_boxes_are_scaled_to_the_photo_each_axis_by_its_own_ratio():
    photo = np.zeros((200, 200, 3), np.uint8)  # the reading's 100 x 50 drawn on 200 x 200
    drawn = annotate(photo, Reading(100, 50, [Die(2, (10, 10, 30, 30), 0.9)]))
    assert _is(drawn, 20, 80, COLOURS["table"])  # left edge: x 20, y 40..120
    assert _is(drawn, 40, 120, COLOURS["table"])  # bottom edge
    assert not drawn[150, 20].any()  # under the box


def test_the_outline_is_drawn_closed_and_the_photo_itself_is_left_as_it_was():
    photo = np.zeros((200, 200, 3), np.uint8)
    reading = Reading(200, 200, [], outline=[(20, 60), (180, 60), (180, 180)])
    drawn = annotate(photo, reading)
    assert _is(drawn, 100, 60, COLOURS["outline"])
    # the closing side, from (180, 180) back to (20, 60), passes (100, 120)
    assert np.abs(drawn[119:122, 100].astype(int) - COLOURS["outline"]).min(axis=0).max() < 40
    assert not photo.any()  # annotate draws on a copy


def test_labels_say_value_state_and_confidence_and_the_summary_the_values_or_no_dice(
    monkeypatch,
):
    texts = _texts(monkeypatch)
    dice = [
        Die(2, (20, 60, 50, 90), 0.97),
        Die(4, (70, 60, 100, 90), 0.5, on_table=False),
        Die(6, (120, 60, 150, 90), 0.8, cocked=True),
        Die(5, (170, 60, 200, 90), 0.4, unsure=True),
    ]
    annotate(np.zeros((200, 300, 3), np.uint8), Reading(300, 200, dice))
    assert texts[:4] == ["2 0.97", "4 off 0.50", "? 0.80", "5? 0.40"]
    assert set(texts[4:]) == {"2 5  BUST"}  # off the table: a bust
    texts.clear()
    annotate(np.zeros((200, 300, 3), np.uint8), Reading(300, 200, []))
    assert set(texts) == {"no dice"}


def test_a_die_at_the_top_of_the_photo_has_its_label_below_its_box():
    drawn = annotate(
        np.zeros((200, 300, 3), np.uint8), Reading(300, 200, [Die(3, (100, 2, 130, 40), 0.9)])
    )
    below = drawn[42:55, 100:140].reshape(-1, 3)
    assert (below == COLOURS["table"]).all(axis=1).mean() > 0.3  # the label's background


def test_lines_grow_with_the_photo():
    photo = np.zeros((1200, 1600, 3), np.uint8)  # 4 px lines
    drawn = annotate(photo, Reading(1600, 1200, [Die(2, (400, 400, 600, 600), 0.9)]))
    for x in (399, 400, 401):
        assert np.abs(drawn[500, x].astype(int) - COLOURS["table"]).max() < 30, x


def test_save_annotated_makes_the_folder_and_writes_the_drawn_photo(tmp_path):
    photo = np.zeros((60, 80, 3), np.uint8)
    reading = Reading(80, 60, [Die(2, (10, 10, 40, 40), 0.9)])
    path = save_annotated(photo, reading, tmp_path / "new" / "deeper" / "roll.png")
    assert path == tmp_path / "new" / "deeper" / "roll.png"
    assert np.array_equal(cv2.imread(str(path)), annotate(photo, reading))  # PNG: lossless
    plain = save_annotated(photo, reading, tmp_path / "roll")  # no suffix: a JPEG
    assert plain.read_bytes()[:3] == b"\xff\xd8\xff"


def test_save_annotated_to_a_suffix_no_image_format_has_says_so_and_writes_nothing(tmp_path):
    photo = np.zeros((60, 80, 3), np.uint8)
    target = tmp_path / "roll.xyz"
    with pytest.raises(ValueError, match=r"cannot encode an image as '\.xyz'"):
        save_annotated(photo, Reading(80, 60, []), target)
    assert list(tmp_path.iterdir()) == []
