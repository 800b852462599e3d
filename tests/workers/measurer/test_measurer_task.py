"""The ``measurer.measure`` handler on a real SQLite event log: the points it appends and the snapshot."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from _measurer_events import finding_derived, miner_accepted, run_recorded, session_ended, t
from typer.testing import CliRunner

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema, utcnow
from ouroboros_gates.ops.cli import app
from ouroboros_gates.schemas import Event, Measure, Scope, SeriesPointRecorded
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.measurer import SERIES, series_stream
from ouroboros_gates.workers.measurer.tasks import measure
from ouroboros_gates.workers.shell import Context, Outcome

PRODUCER = "measurer.measure"


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    url = f"sqlite:///{tmp_path}/e.sqlite"
    store = SqlEventStore.from_url(url)
    ensure_schema(store.engine)
    seeds: list[tuple[str, Event]] = [
        ("run/r1", run_recorded("r1", "2026-10-05T16:00:00Z", 200, 3, read=990, fresh=10)),
        ("run/r2", run_recorded("r2", "2026-10-06T06:30:00Z", 100, 2, read=50, fresh=50)),
        ("run/r3", run_recorded("r3", "2026-10-12T18:00:00Z", 400, 0)),
        ("ticket/7", session_ended(7, "2026-10-05T16:00:00Z", "2026-10-05T18:00:00Z", 2.5, "ready")),
        ("miner/m", miner_accepted("m", Scope.GENERIC)),
        ("run/r1", finding_derived("m", "r1", Scope.GENERIC)),
    ]
    for i, (stream, event) in enumerate(seeds):
        store.commit([StreamWrite(stream, [event])], Metadata(producer="seed", message_id=f"seed-{i:04d}"))
    return Context(settings=Settings(state=tmp_path / "state", database_url=url), store=store, worker="test")


def handle(ctx: Context, message: Measure) -> tuple[Outcome, bool]:
    """Call the handler and commit as the shell does; whether the commit was a duplicate."""
    outcome: Outcome = measure.handler(message, ctx)
    result = ctx.store.commit(outcome.writes, Metadata.for_message(PRODUCER, message))
    return outcome, result.duplicate


def points_of(ctx: Context, at_stream: str) -> list[SeriesPointRecorded]:
    events = [stored.decode() for stored in ctx.store.read_stream(at_stream)]
    assert all(isinstance(e, SeriesPointRecorded) for e in events)
    return [e for e in events if isinstance(e, SeriesPointRecorded)]


def test_measure_appends_the_points_and_writes_the_snapshot(ctx: Context) -> None:
    at = utcnow()
    message = Measure(message_id="measure-0001", at=at)
    handle(ctx, message)
    recorded = points_of(ctx, series_stream(at))
    assert series_stream(at).startswith("series/") and series_stream(at).endswith("Z")
    by_name = {e.point.series: e.point for e in recorded}
    assert set(by_name) == set(SERIES)
    daily = [e.point for e in recorded if e.point.series == SERIES[0]]
    assert [(p.labels["day"], p.value) for p in daily] == [
        ("2026-10-05", pytest.approx(1000 * 5 / 300)),
        ("2026-10-12", 0.0),
    ]
    assert by_name["ouroboros.h_fleet"].value == pytest.approx(1040 / 1100)
    assert by_name["ouroboros.cost_per_ready_pull_request_usd"].value == 2.5
    snapshot = orjson.loads((ctx.settings.state_dir / "ouroboros.json").read_bytes())
    assert snapshot["generated_at"] == at.isoformat().replace("+00:00", "Z")
    assert snapshot["accepted_miners"] == {
        "generic": {"count": 1, "miners": ["m"]},
        "tenant": {"count": 0, "miners": []},
    }
    assert [(o["run"], o["h_r"]) for o in snapshot["h_fleet"]["offenders"]] == [("r2", 0.5)]
    weekly = snapshot["series"]["ouroboros.struggle_rate_per_1k_tool_calls_weekly"]
    assert [p["labels"]["week"] for p in weekly] == ["2026-10-12"]  # only the latest week is shown
    assert {p["labels"]["scope"]: p["value"] for p in snapshot["series"]["ouroboros.findings"]} == {
        "generic": 1.0,
        "tenant": 0.0,
    }


def test_measure_is_idempotent_on_the_message_and_on_the_instant(ctx: Context) -> None:
    at = utcnow()
    first = Measure(message_id="measure-0001", at=at)
    _, duplicate = handle(ctx, first)
    assert not duplicate
    count = len(points_of(ctx, series_stream(at)))
    _, duplicate = handle(ctx, first)  # redelivered
    assert duplicate
    outcome, duplicate = handle(
        ctx, Measure(message_id="measure-0002", at=at)
    )  # another message, same instant
    assert not duplicate and not outcome.writes
    assert len(points_of(ctx, series_stream(at))) == count
    assert ctx.store.is_handled(PRODUCER, "measure-0002")


def test_a_later_measurement_appends_only_the_points_that_moved(ctx: Context) -> None:
    """The per-day and per-week history is appended once and again only where a value moved; the points
    dated at the instant measured (h_fleet, the fits, the totals) are new at every instant."""
    first = utcnow()
    handle(ctx, Measure(message_id="measure-0001", at=first))
    history = {
        (e.point.series, e.point.at) for e in points_of(ctx, series_stream(first)) if e.point.at != first
    }
    assert ("ouroboros.struggle_rate_per_1k_tool_calls", t("2026-10-05T07:00:00Z")) in history
    second = first + timedelta(seconds=1)
    handle(ctx, Measure(message_id="measure-0002", at=second))
    assert {e.point.at for e in points_of(ctx, series_stream(second))} == {second}  # no history again
    event = run_recorded("r4", "2026-10-13T16:00:00Z", 100, 4)
    ctx.store.commit([StreamWrite("run/r4", [event])], Metadata(producer="seed", message_id="seed-late"))
    third = second + timedelta(seconds=1)
    handle(ctx, Measure(message_id="measure-0003", at=third))
    moved = {
        (e.point.series, e.point.at) for e in points_of(ctx, series_stream(third)) if e.point.at != third
    }
    assert moved == {
        (
            "ouroboros.struggle_rate_per_1k_tool_calls",
            t("2026-10-13T07:00:00Z"),
        ),  # r4's day (LA): a new point
        ("ouroboros.struggle_rate_per_1k_tool_calls_weekly", t("2026-10-12T07:00:00Z")),  # its week: moved
    }
    snapshot = orjson.loads((ctx.settings.state_dir / "ouroboros.json").read_bytes())
    assert set(snapshot["series"]) == set(SERIES)  # the snapshot still shows every series


def test_measure_as_of_an_earlier_instant_reads_nothing_and_keeps_the_later_snapshot(ctx: Context) -> None:
    now = utcnow()
    handle(ctx, Measure(message_id="measure-0001", at=now))
    earlier = now - timedelta(days=1)
    handle(ctx, Measure(message_id="measure-0000", at=earlier))  # a late, old message
    old = {e.point.series: e.point for e in points_of(ctx, series_stream(earlier))}
    assert old["ouroboros.h_fleet"].value is None
    assert old["ouroboros.h_fleet"].reason == "no prompt tokens in 0 run(s)"
    snapshot = orjson.loads((ctx.settings.state_dir / "ouroboros.json").read_bytes())
    assert snapshot["generated_at"] == now.isoformat().replace("+00:00", "Z")


def test_cli_measure_json_prints_the_snapshot_and_appends_nothing(ctx: Context, tmp_path: Path) -> None:
    env = {"OURO_STATE": str(tmp_path / "state"), "OURO_DATABASE_URL": str(ctx.store.engine.url)}
    head = ctx.store.head()
    out = CliRunner().invoke(app, ["measure", "--json", "--at", "2026-11-01"], env=env)
    assert out.exit_code == 0, out.output
    doc = orjson.loads(out.stdout)
    assert doc["generated_at"] == "2026-11-01T07:00:00Z"  # local midnight, PDT
    assert doc["h_fleet"]["value"] is None  # the seeds were recorded after that instant
    assert ctx.store.head() == head
    out = CliRunner().invoke(app, ["measure"], env=env)
    assert out.exit_code == 0, out.output
    for shown in (
        "struggle_rate_per_1k_tool_calls_weekly",
        "compounding_per_week",
        "h_fleet",
        "snapshot written",
    ):
        assert shown in out.stdout
    snapshot = orjson.loads((tmp_path / "state" / "ouroboros.json").read_bytes())
    assert snapshot["h_fleet"]["value"] == pytest.approx(1040 / 1100)
    assert t(snapshot["generated_at"]) > t("2026-11-01T07:00:00Z")
