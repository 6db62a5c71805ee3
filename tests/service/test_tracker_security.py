"""Bearer tokens: random, and usable after ``--token`` on a command line."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from service.tracker import security
from service.tracker.security import hash_password, hash_token, new_token, verify_password


def test_a_token_never_starts_with_a_dash(monkeypatch):
    # argparse reads "--token -abc" as a missing value: such a token could not be passed
    drawn = iter(["-starts-with-a-dash", "-again", "fine-token_0"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: next(drawn))
    assert new_token() == "fine-token_0"


def test_tokens_are_random_url_safe_and_stored_hashed():
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(len(t) == 43 and not t.startswith("-") for t in tokens)
    assert all(
        set(t) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for t in tokens
    )
    token = next(iter(tokens))
    assert hash_token(token) == hash_token(token) != token and len(hash_token(token)) == 64


def test_a_password_is_let_in_only_exactly_as_it_was_set():
    stored = hash_password("Correct horse")
    assert stored != "Correct horse" and verify_password(stored, "Correct horse")
    for wrong in ("correct horse", "Correct horse ", " Correct horse", "Correct hors", ""):
        assert not verify_password(stored, wrong), wrong
    assert hash_password("Correct horse") != stored  # salted: the same password hashes anew


def test_a_damaged_stored_hash_refuses_the_login_instead_of_failing():
    stored = hash_password("pw")
    for damaged in ("", "not a hash", stored[:-8], stored.replace("$argon2id$", "$argon2x$")):
        assert verify_password(damaged, "pw") is False, damaged


def test_a_token_is_stored_as_its_whole_sha256():
    # tokens already in a tracker's database were stored so: another hash would log them out
    token = new_token()
    assert hash_token(token) == hashlib.sha256(token.encode()).hexdigest()
    assert hash_token(token[:-1] + ("A" if token[-1] != "A" else "B")) != hash_token(token)


def test_at_most_a_few_argon2_runs_at_once(monkeypatch):
    running, most = 0, 0
    lock = threading.Lock()

    class Slow:
        def _run(self, *args):
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
            time.sleep(0.2)
            with lock:
                running -= 1
            return "$hash"

        hash = verify = _run

    monkeypatch.setattr(security, "_hasher", Slow())
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(lambda i: security.hash_password("pw"), range(12)))
        list(pool.map(lambda i: security.verify_password("$hash", "pw"), range(12)))
    assert most == security.ARGON2_AT_ONCE == 4
