"""The Morning Roll tracker: accounts, day rules, leaderboard, roll call, turn evidence.

Example:
    >>> from service.tracker import create_app
    >>> app = create_app("sqlite:///tracker.sqlite3")  # doctest: +SKIP
    >>> # standalone: ``dicecam tracker``; embedded: ``app.mount("/tracker", create_app())``
"""

from service.tracker.app import create_app
from service.tracker.db import default_database_url, make_engine, migrate

__all__ = ["create_app", "default_database_url", "make_engine", "migrate"]
