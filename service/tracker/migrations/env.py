"""Alembic environment: migrations run on a connection handed over by ``service.tracker.db``."""

from alembic import context

from service.tracker.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
