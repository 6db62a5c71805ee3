"""Password hashing (argon2id) and bearer tokens (random, stored as SHA-256).

Each argon2 hash or check takes 64 MiB for a moment: at most :data:`ARGON2_AT_ONCE` run at once,
the others wait, so a flood of logins or registrations (no account needed) costs time, not the
host's memory (40 at once took 2 GB).
"""

from __future__ import annotations

import hashlib
import secrets
import threading

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

__all__ = ["hash_password", "hash_token", "new_token", "verify_password"]

_hasher = PasswordHasher()

ARGON2_AT_ONCE = 4
"""argon2 hashes and checks running at once (each holds ``memory_cost``, 64 MiB)."""
_slots = threading.BoundedSemaphore(ARGON2_AT_ONCE)


def hash_password(password: str) -> str:
    with _slots:
        return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        with _slots:
            return _hasher.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    """A random bearer token (32 bytes, URL-safe base64) that does not start with ``-``: one
    that did would read as an option after ``--token`` on a command line (1 token in 64)."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
