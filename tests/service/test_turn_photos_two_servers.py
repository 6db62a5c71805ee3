"""Two ``dicecam serve`` on one data folder: the second's start cleans up the photo files of
turns the turns file does not hold, and must leave alone a photo the first has just saved for a
turn it started after that clean-up read the file."""

from __future__ import annotations

from pathlib import Path

import httpx

from service.app import create_app
from service.settings import Settings
from service.turn_db import TurnDatabase

from dicecam_testing.turns import QueueReader, dice, jpeg


def test_a_photo_the_other_server_saves_during_the_start_clean_up_is_kept(serve, tmp_path):
    reader = QueueReader()
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    first = httpx.Client(base_url=serve(app).url, timeout=30)
    photo, played = jpeg(), []

    class Folder(type(Path())):  # the photo folder as the starting server sees it
        def glob(self, pattern: str):
            if not played:  # the first server plays now: a new turn and a photo of its roll
                t = first.post("/api/v1/turns", json={"player": "ann"}).json()
                reader.rolls.append(dice([1, 2, 2, 3, 4, 6]))
                r = first.post(
                    f"/api/v1/turns/{t['id']}/rolls",
                    files={"photo": ("roll.jpg", photo, "image/jpeg")},
                )
                assert r.status_code == 200, r.text
                played.append(t["id"])
            return super().glob(pattern)

    orphan = tmp_path / "turn-photos" / "0123456789ab-0-cafe.photo"  # of no turn of the file
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"left by a turn deleted")
    second = TurnDatabase(tmp_path / "turns.sqlite3", tmp_path / "turn-photos")
    second.photo_dir = Folder(second.photo_dir)
    try:
        assert second.remove_orphan_photos() == 1  # the orphan, not the new photo
    finally:
        second.dispose()
    assert [p.read_bytes() for p in (tmp_path / "turn-photos").glob("*.photo")] == [photo]
    t = first.get(f"/api/v1/turns/{played[0]}").json()
    assert t["last_roll"]["source"] == "photo"
    first.close()
