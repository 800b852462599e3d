"""The fleet's own tasks: the probe, the outbox relay and the cron trigger.

The probe is an operator's health check that holds a worker for a while, then records that it ran:

``ouro publish Probe '{"probe": "p1", "hold_s": 5}'`` shows end to end that a queue is served; the
reliability tests use a long hold to kill a worker mid-task. A probe with ``chain > 0`` asks for the
next probe through the transactional outbox.
"""

from __future__ import annotations

import time
from typing import Any

from ouroboros_gates.schemas import Probe, ProbeCompleted, content_id
from ouroboros_gates.workers.app import app
from ouroboros_gates.workers.shell import (
    Context,
    Outcome,
    context,
    fleet_task,
    publish,
    redeliver_lost,
    relay_outbox,
)
from ouroboros_gates.workers.triggers import fire


def follow_up(message: Probe) -> Probe | None:
    """The next probe of a chain, with a message id derived from this one."""
    if message.chain <= 0:
        return None
    return Probe(
        message_id=content_id("probe-chain", message.message_id),
        correlation_id=message.correlation_id or message.message_id,
        causation_id=message.message_id,
        tenant=message.tenant,
        probe=f"{message.probe}+1",
        hold_s=message.hold_s,
        chain=message.chain - 1,
    )


@fleet_task(Probe)
def probe(message: Probe, ctx: Context) -> Outcome:
    """fleet.probe: hold, then record who ran it."""
    started = time.monotonic()
    time.sleep(message.hold_s)
    event = ProbeCompleted(
        probe=message.probe, hostname=ctx.worker, held_s=round(time.monotonic() - started, 3)
    )
    nxt = follow_up(message)
    return Outcome.single(f"probe/{message.probe}", event, follow_ups=(nxt,) if nxt else ())


@app.task(name="fleet.relay_outbox")
def relay() -> int:
    """fleet.relay_outbox: publish outbox entries a crashed worker left behind, and again those the broker
    lost (published long ago, never recorded) (beat, every 30 s)."""
    ctx = context()
    return relay_outbox(ctx.store, limit=1000) + redeliver_lost(ctx, limit=1000)


@app.task(name="fleet.trigger", bind=True, ignore_result=True)
def trigger(self: Any, name: str) -> str:
    """fleet.trigger: fire the named cron trigger (beat); returns the outcome, which Flower shows."""
    ctx = context()
    fired = fire(
        name,
        ctx.store.side_tables,
        registered=set(self.app.tasks),
        publish=publish,
        tenant=ctx.settings.tenant,
        # By then the occurrence has ended, or its message came back from a worker that died.
        lock_s=(ctx.settings.time_limit_s or 3600.0) + ctx.settings.visibility_timeout_s,
    )
    return fired.outcome
