"""Alembic takes an empty database to head, and the head matches the tables the code declares."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from ouroboros_gates.events import current_revision, head_revision, make_engine, upgrade
from ouroboros_gates.events.migrate import target_metadata


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_upgrade_from_empty_to_head_matches_metadata(backend: str, request: pytest.FixtureRequest) -> None:
    engine = make_engine(request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url"))
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), target_metadata()) == []
    upgrade(engine)  # a second upgrade is a no-op
    assert current_revision(engine) == head_revision()
    engine.dispose()


def test_the_cheap_head_check_agrees_with_alembic() -> None:
    from ouroboros_gates.events.migrate import _head_from_files

    assert _head_from_files() == head_revision()
