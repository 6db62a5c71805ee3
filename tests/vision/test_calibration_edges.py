"""A fixed camera's boundary at its edges: shapes check_polygon takes and refuses, the 3% a photo's
shape may differ by, and stored files with odd fields."""

from __future__ import annotations

import json

import pytest

from vision.table.calibration import Calibration, CalibrationError, check_polygon


def test_a_u_shaped_surface_whose_top_edges_line_up_is_not_crossing_itself():
    u = [[0, 0], [10, 0], [10, 10], [7, 10], [7, 5], [3, 5], [3, 10], [0, 10]]
    assert check_polygon(u, 10, 10) == [(float(x), float(y)) for x, y in u]


def test_points_closer_than_a_ten_thousandth_of_the_photo_are_the_same_point():
    with pytest.raises(CalibrationError, match=r"the same point twice \(points 2 and 3"):
        check_polygon([[0, 0], [640, 0], [640, 0.05], [320, 480]], 640, 480)


def test_a_boundary_of_exactly_the_least_area_is_taken():
    assert check_polygon([[0, 0], [1, 0], [0, 0.01]])  # 0.5% of the photo
    with pytest.raises(CalibrationError, match=r"at least 0.5%\), got 0.45%"):
        check_polygon([[0, 0], [1, 0], [0, 0.009]])


def test_a_photo_fits_a_boundary_drawn_on_a_shape_within_3_percent():
    cal = Calibration.from_pixels([(0, 0), (640, 0), (320, 480)], 640, 480)  # 4:3
    assert cal.fits(1310, 960)  # 2.3% wider
    assert not cal.fits(1320, 960)  # 3.1% wider
    assert not cal.fits(1440, 960)  # 3:2


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ({"format": True}, r"written by a newer dicecam \(format True"),
        ({"aspect": 0}, "expected 'aspect' a positive number, got 0"),
        ({"points": [1, 2, 3]}, r"cal.json: .*"),
    ],
)
def test_a_stored_file_with_an_odd_field_is_a_calibration_error_naming_it(tmp_path, field, message):
    stored = {"points": [[0, 0], [1, 0], [0, 1]], **field}
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(stored), encoding="utf-8")
    with pytest.raises(CalibrationError, match=message):
        Calibration.load(path)


def test_saving_makes_the_folder_it_goes_in(tmp_path):
    cal = Calibration.from_pixels([(0, 0), (640, 0), (320, 480)], 640, 480)
    path = cal.save(tmp_path / "new" / "deeper" / "cal.json")
    assert path == tmp_path / "new" / "deeper" / "cal.json"
    assert Calibration.load(path).points == cal.points


def test_a_boundary_just_under_the_smallest_area_does_not_say_it_has_it() -> None:
    """0.495% of the photo used to be shown rounded up, "at least 0.5%, got 0.50%"."""
    with pytest.raises(CalibrationError, match=r"at least 0\.5%\), got 0\.49% of it"):
        check_polygon([[0, 0], [1, 0], [0, 0.0099]])
    with pytest.raises(CalibrationError, match=r"got 0\.00% of it"):  # points on a line
        check_polygon([[0, 0], [0.5, 0.5], [1, 1]])
