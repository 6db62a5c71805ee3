"""Rules of the five dice games dicecam serves, and the exact strategy advisor.

Pure Python, no I/O: nothing here imports from ``vision`` or ``service``.
"""

__all__: list[str] = []
