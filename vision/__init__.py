"""Images in, dice readings out."""

__all__: list[str] = []
