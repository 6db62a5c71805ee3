"""Bearer tokens: random, and usable after ``--token`` on a command line."""

from __future__ import annotations

import secrets

from service.tracker.security import hash_token, new_token


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
