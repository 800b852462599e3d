"""The miner worker: ingests runs and (with the miners) derives findings from them."""

from __future__ import annotations

from ouroboros_gates.workers.miner.ingest import ingest_run

__all__ = ["ingest_run"]
