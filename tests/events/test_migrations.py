"""One linear chain of migrations: an empty database, or one an earlier release left, goes to head and
back."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from ouroboros_gates.events import (
    MigrationError,
    current_revision,
    downgrade,
    head_revision,
    history,
    make_engine,
    upgrade,
)
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


def test_one_linear_chain_from_the_first_revision() -> None:
    steps = history()
    assert [s.down_revision for s in steps] == [None, *(s.revision for s in steps[:-1])]
    assert steps[0].revision == "0001" and steps[-1].revision == head_revision()
    assert all(step.doc for step in steps)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_down_to_base_and_up_again(backend: str, request: pytest.FixtureRequest) -> None:
    engine = make_engine(request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url"))
    upgrade(engine)
    for step in reversed(
        history()[:-1]
    ):  # one revision at a time, each leaving a schema its upgrade rebuilds
        downgrade(engine, step.revision)
        assert current_revision(engine) == step.revision
    downgrade(engine, "base")
    assert current_revision(engine) is None
    with engine.connect() as conn:
        assert set(inspect(conn).get_table_names()) <= {"alembic_version"}
    upgrade(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), target_metadata()) == []
    engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_database_of_the_earliest_release_upgrades_with_its_events(
    backend: str, request: pytest.FixtureRequest
) -> None:
    engine = make_engine(request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url"))
    upgrade(engine, "0001")  # the first release's schema: the event log alone
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO ouro_events (position, stream, version, type, schema_version, payload, meta, "
                "recorded_at,"
                " message_id) VALUES (1, 'run/r1', 1, 'RunRecorded', 1, '{}', '{}', CURRENT_TIMESTAMP, 'm1')"
            )
        )
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT stream FROM ouro_events")).scalars().all() == ["run/r1"]
        assert compare_metadata(MigrationContext.configure(conn), target_metadata()) == []
    engine.dispose()


def test_a_database_stamped_with_the_three_heads_of_earlier_releases_upgrades(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    upgrade(engine, "0011")  # the last revision those releases had
    with engine.begin() as conn:  # what releases before 0.2.0 left: every branch applied, three heads stamped
        conn.execute(text("DELETE FROM alembic_version"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('0008'), ('0010'), ('0011')"))
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO alembic_version VALUES ('0004')"))
    with pytest.raises(MigrationError, match=f"stamped 0004,{head_revision()}"):
        upgrade(engine)
    engine.dispose()
