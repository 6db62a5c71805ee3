"""A fixed camera's calibration, past the plain cases: polygons `dicecam calibrate`, the Python
API and the service's ``PUT /api/v1/calibration`` all refuse alike, photos of another shape than
the one the boundary was drawn on, the stored file, and dice on the boundary line."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from PIL import Image

from service.api.server import BackgroundServer
from service.app import create_app
from service.cli import main
from service.settings import Settings
from vision.table import MAX_POINTS, Calibration, CalibrationError, check_polygon

pytestmark = pytest.mark.usefixtures("table_settings")


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "cam.jpg"
    Image.new("RGB", (640, 480), (40, 120, 40)).save(path)
    return path


@pytest.fixture(scope="module")
def api():
    """A real service on its own data folder (no reader is needed to store a boundary)."""
    import tempfile

    with tempfile.TemporaryDirectory() as data:
        app = create_app(Settings(data_dir=data), reader=object(), tracker_app=None, submitter=None)
        with BackgroundServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as client:
            yield client


def circle(n: int) -> list[tuple[float, float]]:
    return [
        (320 + 300 * math.cos(k * 2 * math.pi / n), 240 + 200 * math.sin(k * 2 * math.pi / n))
        for k in range(n)
    ]


BAD = {  # pixels of a 640x480 photo -> what the message says
    "repeated point": ([(10, 10), (10, 10), (600, 10), (10, 400)], "the same point twice"),
    "bow-tie": ([(0, 0), (600, 400), (600, 0), (0, 400)], "crosses itself (edges 1-2 and 3-4)"),
    "outside the photo": (
        [(0, 0), (900, 0), (0, 400)],
        "point 2 (900, 0) lies outside the 640x480",
    ),
    "runs back": ([(0, 0), (640, 0), (320, 0), (0, 480)], "turns back along itself at point 2"),
    "zero area": ([(0, 0), (100, 100), (200, 200)], "enclosing some of the photo"),
    "too many points": (circle(MAX_POINTS + 1), f"at most {MAX_POINTS} boundary points, got 65"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_cli_refuses_what_the_service_refuses(case, photo, api, tmp_path, capsys):
    """`dicecam calibrate --points` stored a bow-tie, a repeated corner, corners off the photo,
    a spike and any number of points, all of which the service's PUT refused with 422."""
    points, message = BAD[case]
    args = [f"{x:.2f},{y:.2f}" for x, y in points]
    assert main(["calibrate", str(photo), "--points", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicecam calibrate: error: ") and message in err, err
    assert not (tmp_path / "data" / "calibration.json").exists()

    r = api.put("/api/v1/calibration", json={"points": points, "width": 640, "height": 480})
    assert r.status_code == 422 and message in r.json()["detail"], r.text
    with pytest.raises(CalibrationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Calibration.from_pixels(points, 640, 480)


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([(math.nan, 0), (600, 0), (0, 400)], "point 1: expected finite numbers, got (nan, 0"),
        ([(0, 0), (math.inf, 0), (0, 400)], "point 2: expected finite numbers, got (inf, 0"),
        ([(0, 0), ("ab", 0), (0, 400)], "point 2: expected [x, y] numbers, got ['ab', 0]"),
        ([(0, 0), (600, 0, 1), (0, 400)], "point 2: expected [x, y], got (600, 0, 1)"),
        ("0,0 600,0 0,400", "expected a list of [x, y] points, got '0,0 600,0 0,400'"),
    ],
)
def test_numbers_that_are_no_place_say_so(points, message):
    with pytest.raises(CalibrationError) as caught:
        check_polygon(points, 640, 480)
    assert message in str(caught.value)


def test_nan_through_the_cli_and_the_api_is_named_as_such(photo, api, capsys):
    assert main(["calibrate", str(photo), "--points", "nan,0", "600,0", "0,400"]) == 2
    assert "point 1: expected finite numbers" in capsys.readouterr().err
    body = '{"points": [[NaN, 0], [600, 0], [0, 400]], "width": 640, "height": 480}'
    r = api.put("/api/v1/calibration", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "expected finite numbers" in r.json()["detail"], r.text


def test_normalised_points_are_held_to_the_photo_too(photo, tmp_path, capsys):
    assert main(["calibrate", str(photo), "--normalised", "--points", "0,0", "1.4,0", "0,1"]) == 2
    err = capsys.readouterr().err
    assert "point 2: expected normalised coordinates 0..1, got (1.4, 0)" in err
    assert "(photo is 640x480 pixels)" in err
    assert main(["calibrate", str(photo), "--normalised", "--points", "0,0", "1,0", "0,1"]) == 0
    stored = json.loads((tmp_path / "data" / "calibration.json").read_text())
    assert stored["points"] == [[0, 0], [1, 0], [0, 1]] and stored["aspect"] == 1.33333


def test_the_most_points_are_taken_and_a_file_of_an_older_dicecam_still_loads(tmp_path):
    cal = Calibration.from_pixels(circle(MAX_POINTS), 640, 480)
    assert len(cal.points) == MAX_POINTS
    # older `dicecam calibrate` let corners lie up to half the photo past its edge: still read
    old = tmp_path / "old.json"
    old.write_text('{"format": 1, "points": [[-0.2, 0], [1.3, 0], [0.5, 1]]}')
    assert Calibration.load(old).points == [(-0.2, 0.0), (1.3, 0.0), (0.5, 1.0)]
