"""An outbox file is an entry of the folder it lies in: one whose ``state`` names another folder
(a delivered turn copied back into ``pending/`` by hand) is neither listed nor sent, and
``Outbox.unreadable`` (``dicecam outbox list``) names it, where it was skipped without a word."""

from __future__ import annotations

import json
import shutil

from service.tracker_client import Outbox, OutboxEntry

from dicecam_testing.cli import run_in_process


def test_an_entry_in_another_states_folder_is_named_and_left_as_it_is(tmp_path, capsys):
    box = Outbox(tmp_path)
    entry = OutboxEntry(key="t-1", base_url="http://tracker.test", turn={"score": 600})
    box.put(entry)
    entry.state, entry.result = "delivered", {"id": 1, "day": "2026-11-27", "score": 600}
    box.write(entry)
    copied = tmp_path / "pending" / "t-1.json"
    shutil.copy(tmp_path / "delivered" / "t-1.json", copied)
    before = copied.read_bytes()
    assert [e.key for e in box.entries("pending")] == []
    assert [e.key for e in box.entries("delivered")] == ["t-1"]
    assert box.unreadable() == [copied]
    code, out, err = run_in_process(capsys, "outbox", "list", "--outbox-dir", str(tmp_path))
    assert code == 0, err
    assert [json.loads(line)["state"] for line in out.splitlines()] == ["delivered"]
    assert err == f"unreadable outbox file (left as is): {copied}\n"
    assert copied.read_bytes() == before
