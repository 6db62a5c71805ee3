"""A fixed camera's calibration, past the plain cases: polygons `dicecam calibrate`, the Python
API and the service's ``PUT /api/v1/calibration`` all refuse alike, photos of another shape than
the one the boundary was drawn on, the stored file, and dice on the boundary line."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from PIL import Image

from service.app import create_app
from service.cli import main
from service.settings import Settings
from vision.table import MAX_POINTS, Calibration, CalibrationError, check_polygon

from dicecam_testing.servers import LiveServer

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
        with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as client:
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


# -- photos of another shape than the calibration's ---------------------------------------------


@pytest.fixture
def detector(tmp_path):
    """A known-output detector: a 5 on the left of the frame, a 2 on the right (its boxes land
    at the same fractions of any photo)."""
    pytest.importorskip("onnx", reason="the onnx package builds the test detector")
    from dicecam_testing import onnx_models as models

    preds = models.raw_preds([(80, 160, 30, 30, {4: 0.9}), (240, 160, 30, 30, {1: 0.9})])
    return models.make_model(tmp_path / "two.onnx", preds)


def shipped_surface_model():
    from vision.table import DEFAULT_SURFACE_MODEL

    if not DEFAULT_SURFACE_MODEL.is_file():
        pytest.skip(f"shipped outline model not present: {DEFAULT_SURFACE_MODEL}")


def save_photo(path, size, exif_rotation=False):
    img = Image.new("RGB", size, (40, 120, 40))
    if exif_rotation:  # stored landscape, shown portrait (a phone held upright)
        exif = Image.Exif()
        exif[0x0112] = 6
        img.save(path, exif=exif)
    else:
        img.save(path)
    return path


LEFT_HALF = ["0,0", "320,0", "320,480", "0,480"]


def read_json(capsys, *args) -> dict:
    assert main(["read", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_photo_of_another_shape_gets_the_learned_outline_and_says_so(
    detector, tmp_path, capsys, monkeypatch
):
    """Calibrated on 640x480, `dicecam read` of a 1280x960 photo uses the boundary scaled; a
    1280x720 or portrait one got no outline at all (every die on the table, said nowhere), as
    the calibrated stage left the learned outline out; now it gets the learned outline and the
    reading says why the calibration was not used."""
    shipped_surface_model()
    monkeypatch.setenv("DICECAM_MIRROR", "0")
    cam = save_photo(tmp_path / "cam.jpg", (640, 480))
    assert main(["calibrate", str(cam), "--points", *LEFT_HALF]) == 0
    capsys.readouterr()
    model = ["--model", str(detector)]

    same = read_json(capsys, *model, str(save_photo(tmp_path / "big.jpg", (1280, 960))))
    assert same["outline_source"] == "calibration" and same["outline_note"] is None
    assert same["outline"] == [[0, 0], [640, 0], [640, 960], [0, 960]]
    assert [d["on_table"] for d in same["dice"]] == [True, False] and same["bust"]

    for size, shape in (((1280, 720), "16:9 (1280x720)"), ((480, 640), "3:4 (480x640)")):
        other = read_json(capsys, *model, str(save_photo(tmp_path / "other.jpg", size)))
        assert other["outline_source"] == "learned", other
        assert f"drawn on a 4:3 photo, this one is {shape}" in other["outline_note"]
        assert "learned outline instead" in other["outline_note"]
    # the plain summary says it too, under the photo's line
    assert main(["read", *model, str(tmp_path / "other.jpg")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'other.jpg'}: ")
    assert lines[1] == f"  note: {other['outline_note']}"


def test_a_photo_turned_by_its_exif_is_calibrated_and_read_upright(
    detector, tmp_path, capsys, monkeypatch
):
    """A phone photo stored landscape and shown portrait (EXIF orientation 6) is calibrated
    and read as shown: its boundary applies to it and to portrait photos, not to landscape."""
    monkeypatch.setenv("DICECAM_MIRROR", "0")
    upright = save_photo(tmp_path / "upright.jpg", (640, 480), exif_rotation=True)
    assert main(["calibrate", str(upright), "--json", "--points", "0,0", "480,0", "480,320"]) == 0
    assert json.loads(capsys.readouterr().out)["width"] == 480
    assert Calibration.load().aspect == pytest.approx(0.75)
    again = read_json(capsys, "--model", str(detector), str(upright))
    assert (again["width"], again["height"]) == (480, 640)
    assert again["outline_source"] == "calibration" and again["outline_note"] is None
    assert again["outline"] == [[0, 0], [480, 0], [480, 320]]


def test_the_service_agrees_with_the_cli_on_a_photo_of_another_shape(detector, tmp_path):
    """The service's reader made while a calibration was stored had no learned outline either:
    its 16:9 photos were read with none."""
    shipped_surface_model()
    from vision import DiceReader

    Calibration.from_pixels([(0, 0), (320, 0), (320, 480), (0, 480)], 640, 480).save()
    reader = DiceReader(detector, faces=False)
    app = create_app(
        Settings(data_dir=tmp_path / "data"), reader=reader, tracker_app=None, submitter=None
    )
    wide = save_photo(tmp_path / "wide.jpg", (1280, 720)).read_bytes()
    big = save_photo(tmp_path / "big.jpg", (1280, 960)).read_bytes()
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        r = c.post("/api/v1/read", files={"photo": ("big.jpg", big, "image/jpeg")})
        assert r.status_code == 200, r.text
        assert r.json()["outline_source"] == "calibration" and r.json()["off_table"] == 1
        r = c.post("/api/v1/read", files={"photo": ("wide.jpg", wide, "image/jpeg")})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["outline_source"] == "learned" and "this one is 16:9" in body["outline_note"]


# -- the stored file ------------------------------------------------------------------------------


def test_a_file_of_a_newer_dicecam_or_a_folder_is_refused_not_misread(photo, tmp_path, capsys):
    """A newer format was read as if it were this one's, and a folder at the calibration's
    path was taken for no calibration (the learned outline, said nowhere)."""
    path = tmp_path / "data" / "calibration.json"
    path.parent.mkdir(parents=True)
    newer = '{"format": 2, "points": [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9]], "corners": "curved"}'
    path.write_text(newer)
    with pytest.raises(CalibrationError, match="written by a newer dicecam \\(format 2; this one"):
        Calibration.load()
    assert path.read_text() == newer
    assert main(["read", str(photo)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "dicecam calibrate --clear" in err  # how to get out of it
    path.unlink()
    path.mkdir()
    with pytest.raises(CalibrationError, match="expected a file, got a folder"):
        Calibration.load()


def test_a_truncated_file_names_itself_and_the_way_out(tmp_path):
    path = tmp_path / "data" / "calibration.json"
    path.parent.mkdir(parents=True)
    whole = Calibration.from_pixels([(0, 0), (320, 0), (320, 480), (0, 480)], 640, 480)
    text = json.dumps(whole.to_dict())
    path.write_text(text[: len(text) // 2])
    with pytest.raises(CalibrationError) as caught:
        Calibration.load()
    assert f"cannot read calibration {path}" in str(caught.value)
    assert "remove it (dicecam calibrate --clear)" in str(caught.value)
    assert main(["calibrate", "--clear"]) == 0 and Calibration.load() is None
