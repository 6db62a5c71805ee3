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


def test_a_turn_left_in_pending_by_a_write_killed_after_delivery_is_found_delivered(tmp_path):
    """``write`` puts the delivered file in place, then removes the pending one: a process
    killed between the two leaves both. The turn is delivered (its answer kept): ``find`` says
    so, a second ``put`` of it changes nothing, and a pending write never undoes it."""
    box = Outbox(tmp_path)
    entry = OutboxEntry(key="t-2", base_url="http://tracker.test", turn={"score": 600})
    box.put(entry)
    pending = tmp_path / "pending" / "t-2.json"
    kept = pending.read_bytes()
    entry.state, entry.result = "delivered", {"id": 7, "day": "2026-11-27", "score": 600}
    box.write(entry)
    pending.write_bytes(kept)  # as the killed write left it
    found = box.find("t-2")
    assert (found.state, found.result) == ("delivered", entry.result)
    box.put(OutboxEntry(key="t-2", base_url="http://tracker.test", turn={"score": 50}))
    box.write(OutboxEntry(key="t-2", base_url="http://tracker.test", turn={"score": 600}))
    assert json.loads((tmp_path / "delivered" / "t-2.json").read_bytes())["result"]["id"] == 7
    assert box.find("t-2").state == "delivered"
