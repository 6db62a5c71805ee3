"""The dicecam service: FastAPI app, camera page, Morning Roll tracker and its client, CLI."""

__all__: list[str] = []
