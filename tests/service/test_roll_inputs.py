"""How a roll may be sent (service.api.uploads), over a real server: every die off the table
typed as no values, media types in any case, a text field where the photo goes, a form with
neither photo nor values."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.turns import QueueReader, dice, jpeg


@pytest.fixture
def service(tmp_path, serve):
    reader = QueueReader()
    app = create_app(
        Settings(data_dir=tmp_path, outbox_retry_s=0),
        reader=reader,
        tracker_app=None,
        submitter=None,
    )
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, reader


def test_every_die_off_the_table_is_typed_as_no_values(service):
    """``{"values": [], "off_table": 6}``: the whole roll left the table, a Morning Roll bust;
    the same in a form (``values`` empty). No values and none off the table say so."""
    http, _ = service
    for send in (
        {"json": {"values": [], "off_table": 6}},
        {"data": {"values": "", "off_table": "6"}},
    ):
        turn = http.post("/api/v1/turns", json={"player": "ann"}).json()
        if "data" in send:  # a form is multipart: a file field of another name makes it so
            send = {**send, "files": {"note": ("note.txt", b"-", "text/plain")}}
        r = http.post(f"/api/v1/turns/{turn['id']}/rolls", **send)
        assert r.status_code == 200, r.text
        assert r.json()["over"] and r.json()["outcome"] == "bust", r.json()
    r = http.post("/api/v1/score?game=greed", json={"values": []})
    assert r.status_code == 422 and "non-empty list" in r.json()["detail"]


def test_a_media_type_in_capitals_is_the_same_type(service):
    """Media types ignore case (RFC 9110): ``Multipart/Form-Data`` is a photo upload and
    ``Application/JSON`` typed values."""
    http, reader = service
    reader.rolls.append(dice([1, 5, 5]))
    upload = http.build_request(
        "POST", "/api/v1/read", files={"photo": ("roll.jpg", jpeg(), "image/jpeg")}
    )
    upload.headers["content-type"] = upload.headers["content-type"].replace(
        "multipart/form-data", "Multipart/Form-Data"
    )
    r = http.send(upload)
    assert r.status_code == 200 and r.json()["values"] == [1, 5, 5], r.text
    r = http.post(
        "/api/v1/score?game=greed",
        content=b'{"values": [1, 5, 5, 2, 3]}',
        headers={"content-type": "Application/JSON"},
    )
    assert r.status_code == 200 and r.json()["values"] == [1, 5, 5, 2, 3], r.text


def test_a_text_field_named_photo_is_refused_as_not_a_file(service):
    http, _ = service
    r = http.post(
        "/api/v1/read",
        data={"photo": "roll.jpg"},
        files={"note": ("note.txt", b"-", "text/plain")},
    )
    assert r.status_code == 422
    assert (
        r.json()["detail"]
        == "'photo' must be a file upload (multipart/form-data), not a text field"
    )


@pytest.mark.parametrize("path", ["/api/v1/score?game=greed", "/api/v1/turns/{turn}/rolls"])
def test_a_form_with_neither_photo_nor_values_is_refused_and_changes_nothing(service, path):
    http, _ = service
    turn = http.post("/api/v1/turns", json={"player": "ann", "game": "greed"}).json()
    r = http.post(
        path.format(turn=turn["id"]),
        data={"off_table": "0"},
        files={"note": ("note.txt", b"-", "text/plain")},
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("missing the photo: send it as a multipart/form-data")
    held = http.get(f"/api/v1/turns/{turn['id']}").json()
    assert (held["rolls"], held["awaiting"]) == (0, "roll")


def test_corrections_sent_as_a_file_are_refused_not_left_out(service):
    """``values`` beside a photo are the player's corrections: sent as a file part they were
    left out and the photo's reading taken instead, silently."""
    http, reader = service
    turn = http.post("/api/v1/turns", json={"player": "ann", "game": "greed"}).json()
    reader.rolls.append(dice([1, 5, 2, 3, 4]))
    r = http.post(
        f"/api/v1/turns/{turn['id']}/rolls",
        files={
            "photo": ("roll.jpg", jpeg(), "image/jpeg"),
            "values": ("values.txt", b"1,1,1,2,3", "text/plain"),
        },
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (
        "'values' must be a text field like '1,5,5' (the corrections), not a file upload"
    )
    held = http.get(f"/api/v1/turns/{turn['id']}").json()
    assert (held["rolls"], held["awaiting"]) == (0, "roll")


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_values_field_beside_a_photo_reads_the_photo(service, empty):
    http, reader = service
    turn = http.post("/api/v1/turns", json={"player": "ann", "game": "greed"}).json()
    reader.rolls.append(dice([1, 5, 2, 3, 4]))
    r = http.post(
        f"/api/v1/turns/{turn['id']}/rolls",
        files={"photo": ("roll.jpg", jpeg(), "image/jpeg")},
        data={"values": empty},
    )
    assert r.status_code == 200, r.text
    assert r.json()["last_roll"]["values"] == [1, 5, 2, 3, 4]
    assert r.json()["last_roll"]["source"] == "photo"


@pytest.mark.parametrize("field", ["file", "image"])
def test_a_photo_sent_under_another_usual_field_name_is_read(service, field):
    http, reader = service
    reader.rolls.append(dice([2, 3, 5]))
    r = http.post("/api/v1/read", files={field: ("roll.jpg", jpeg(), "image/jpeg")})
    assert r.status_code == 200, r.text
    assert (r.json()["values"], r.json()["image"]) == ([2, 3, 5], "roll.jpg")


def test_reading_a_form_of_values_and_no_photo_asks_for_the_photo(service):
    http, _ = service
    r = http.post("/api/v1/read", data={"values": "1,5,5"}, files={"note": ("n.txt", b"-")})
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("missing the photo: send it as a multipart/form-data")


def test_a_roll_body_that_cannot_be_parsed_is_a_400_and_the_turn_is_as_it_was(service):
    """Cut JSON is a 400 saying the body is not JSON; a multipart body whose parts cannot be
    parsed is a 400 saying so (neither a 422 nor the parser's own 400 without a word of what
    went wrong); no roll is made."""
    http, reader = service
    turn = http.post("/api/v1/turns", json={"player": "ann"}).json()
    rolls = f"/api/v1/turns/{turn['id']}/rolls"
    cut = http.post(
        rolls, content=b'{"values": [1, 5', headers={"content-type": "application/json"}
    )
    assert cut.status_code == 400 and cut.json() == {"detail": "the request body is not valid JSON"}
    garbled = b"--x\r\nContent-Disposition: form-data\r\n\r\nno name\r\n--x--\r\n"
    for path in (rolls, "/api/v1/read"):
        r = http.post(
            path, content=garbled, headers={"content-type": "multipart/form-data; boundary=x"}
        )
        assert r.status_code == 400, r.text
        assert r.json()["detail"].startswith("could not parse the multipart form: "), r.text
    again = http.get(f"/api/v1/turns/{turn['id']}").json()
    assert again["rolls"] == 0 and again["state"] == "awaiting_roll", again
