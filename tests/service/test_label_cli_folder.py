"""`dicecam label PHOTOS --out OUT`: a PHOTOS that is no folder is refused in one line saying
what it is (it said only 'must be a folder of photos', with a mistyped folder's name)."""

from __future__ import annotations

import pytest

from dicecam_testing.cli import run_in_process as run


@pytest.mark.parametrize(("make", "what"), [(False, "no such folder"), (True, "a file")])
def test_photos_that_are_no_folder_are_refused_saying_what_they_are(capsys, tmp_path, make, what):
    photos = tmp_path / "rolls"
    if make:
        photos.write_bytes(b"\xff\xd8 a photo, not a folder")
    code, _, err = run(capsys, "label", str(photos), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"PHOTOS must be a folder of photos, got {str(photos)!r} ({what})" in err
    assert not (tmp_path / "out").exists()
