"""Retries and dead letters as Flower shows them: an ``ouro worker`` on Redis and PostgreSQL whose event log
refuses a probe's append (a PostgreSQL trigger), once for one probe and always for another; the first is
retried and then handled, the second retried until ``OURO_MAX_RETRIES`` and dead-lettered. Both are read back
through Flower's HTTP API, with the ledger's record of the dead letter beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fleet_support import (
    finished_tasks,
    flower_api,
    flower_env,
    free_port,
    log_tails,
    ouro,
    poll,
    terminate,
    wait_http,
)

from ouroboros_gates.events import ensure_schema, make_engine, open_store
from ouroboros_gates.schemas import Probe, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues, publish

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]
AUTH = ("ops", "flower-retries-secret")
# The append of ``probe/flaky`` fails the first time only (a sequence is not rolled back with the append),
# that of ``probe/doomed`` every time: each an error of the database, which the shell retries.
REFUSE = """
CREATE SEQUENCE flaky_appends;
CREATE FUNCTION refuse_probe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.stream = 'probe/doomed' THEN
    RAISE EXCEPTION 'the event log refused %% (a test trigger)', NEW.stream;
  END IF;
  IF NEW.stream = 'probe/flaky' THEN
    IF nextval('flaky_appends') = 1 THEN
      RAISE EXCEPTION 'the event log refused %% (a test trigger)', NEW.stream;
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER refuse_probe BEFORE INSERT ON ouro_events FOR EACH ROW EXECUTE FUNCTION refuse_probe();
"""


def _api(base: str, path: str) -> Any:
    return flower_api(base, path, AUTH)


def test_flower_shows_a_retried_task_and_a_dead_letter(tmp_path: Path, redis_url: str, pg_url: str) -> None:
    engine = make_engine(pg_url)
    ensure_schema(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql(REFUSE)
    engine.dispose()
    env = flower_env(tmp_path, redis_url, pg_url, AUTH, OURO_MAX_RETRIES="2", OURO_RETRY_BACKOFF_S="0.5")
    logs = {name: tmp_path / f"{name}.log" for name in ("worker", "flower")}
    port = free_port()
    processes = {
        "worker": ouro("worker", "-Q", "fleet", "-c", "1", env=env, log=logs["worker"]),
        "flower": ouro("flower", f"--port={port}", env=env, log=logs["flower"]),
    }
    base = f"http://127.0.0.1:{port}"

    def said() -> str:
        return log_tails(logs)

    try:
        wait_http(base + "/", processes["flower"], logs["flower"])
        poll(lambda: _api(base, "/api/workers?refresh=1"), 180, "Flower to show the worker", said)
        sender = build_app(Settings(broker_url=redis_url), include=False)
        declare_queues(sender)
        flaky = Probe(message_id=content_id("flower-retries", "flaky"), probe="flaky")
        doomed = Probe(message_id=content_id("flower-retries", "doomed"), probe="doomed")
        publish(flaky, via=sender)
        publish(doomed, via=sender)
        tasks = poll(
            lambda: finished_tasks(_api(base, "/api/tasks"), {flaky.message_id, doomed.message_id}),
            240,
            "both probes to end in Flower",
            said,
        )
        parked = poll(
            lambda: [
                t for t in (_api(base, "/api/tasks") or {}).values() if t["name"] == "fleet.dead_letter"
            ],
            60,
            "the dead letter's task in Flower",
            said,
        )
    finally:
        codes = {name: terminate(process) for name, process in processes.items()}
    assert codes == {"worker": 0, "flower": 0}, said()
    # Retried once, then handled: one task in Flower (the same id), its retries counted, its result.
    assert tasks[flaky.message_id]["state"] == "SUCCESS" and tasks[flaky.message_id]["retries"] == 1
    assert tasks[flaky.message_id]["result"] == "'appended'"
    # Retried OURO_MAX_RETRIES times, then dead-lettered; its dead letter parked as a task of its own.
    assert tasks[doomed.message_id]["retries"] == 2
    assert tasks[doomed.message_id]["result"] == "'dead-lettered'"
    assert len(parked) == 1 and doomed.message_id in parked[0]["args"], parked
    assert "the event log refused probe/doomed" in parked[0]["args"]
    # The ledger agrees: the flaky probe completed once, the doomed one is a dead letter (not permanent).
    store = open_store(pg_url)
    assert [e.type for e in store.read_stream("probe/flaky")] == ["ProbeCompleted"]
    dead = [e.payload for e in store.read_stream("fleet/dead-letter")]
    assert [(d["message_id"], d["permanent"]) for d in dead] == [(doomed.message_id, False)]
