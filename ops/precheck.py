"""The pre-check by hand (``ouro precheck``): the latest proposal of each ticket judged against the configured
forge (``OURO_FORGE``) and the recorded runs at no model cost, reading only (the fleet's
``prechecker.precheck`` records verdicts); and the verdict rows as text, as the command and the main job's
summary print them."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ouroboros_gates.events import EventStore, utcnow
from ouroboros_gates.forge import Forge
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.prechecker import RunIndex, mining_tickets, precheck, registered_kinds

__all__ = ["COLUMNS", "precheck_rows", "verdict_lines"]

COLUMNS = ("ticket", "proposal", "miner", "named", "found", "verdict")
_ROW = "{:<7} {:>10}  {:<20} {:>5} {:>5}  {}"
_INDENT = " " * 8


def precheck_rows(
    forge: Forge, store: EventStore | None, settings: Settings, tickets: Sequence[int] = ()
) -> list[dict[str, Any]]:
    """One verdict per ticket (every open mining ticket when none is named), as JSON-ready rows."""
    chosen = mining_tickets(forge, tickets)
    runs = RunIndex(store, settings.allowed_roots)
    registered, now = registered_kinds(), utcnow()
    return [precheck(ticket, forge, runs, registered, now).verdict.to_json_dict() for ticket in chosen]


def verdict_lines(rows: Iterable[Mapping[str, Any]], width: int | None = 100) -> list[str]:
    """The verdict rows as text, one line per ticket with its reason below it, wrapped to ``width`` (None:
    one line however long, as piped output has it); ``--json`` lists the instances themselves."""
    lines = [_ROW.format(*COLUMNS)]
    for row in rows:
        miner = row.get("miner") or "-"
        named, found = len(row["instances_named"]), len(row["instances_found"])
        lines.append(
            _ROW.format(f"#{row['ticket']}", row.get("proposal") or "-", miner, named, found, row["verdict"])
        )
        if width is None:
            lines.append(_INDENT + row["reason"])
            continue
        lines += textwrap.wrap(
            row["reason"], max(width, 40), initial_indent=_INDENT, subsequent_indent=_INDENT
        )
    return lines
