"""The tracker's passwords cost what they should: the tests' ``quick_password_hashing`` lowers
argon2's cost in the test process, so the real parameters are checked here, on the real hasher."""

from __future__ import annotations

from argon2 import PasswordHasher, extract_parameters

from service.tracker import security


def test_the_tracker_hashes_with_argon2id_at_64_mib_and_three_passes(quick_password_hashing):
    real = quick_password_hashing
    assert isinstance(real, PasswordHasher)
    stored = real.hash("correct horse")
    assert stored.startswith("$argon2id$")
    params = extract_parameters(stored)
    assert (params.memory_cost, params.time_cost) == (65536, 3), params
    assert real.verify(stored, "correct horse")


def test_a_hash_made_at_the_quick_cost_is_checked_by_the_tracker(quick_password_hashing):
    """A hash in the database from before a change of cost (the tests' quick ones, an older
    dicecam's) is still checked: argon2 reads the parameters from the hash."""
    quick = security._hasher.hash("correct horse")
    assert extract_parameters(quick).memory_cost < 65536
    assert quick_password_hashing.verify(quick, "correct horse")
    assert security.verify_password(quick, "correct horse")
    assert not security.verify_password(quick, "wrong horse")
