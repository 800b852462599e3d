"""The close-ticket gate: a ticket closes only on a merged pull request whose backtest missed nothing.

The pull request's body must carry the row ``| Backtest FN | 0 |``, every row of its ``| Check | Command |
Exit |`` table (and every check the forge reports on its head) must have exited 0, and it must be merged.
Otherwise the ticket gets one comment naming the failing row and stays open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ouroboros_gates.forge import PullRequest, WritableForge
from ouroboros_gates.schemas import TicketClosed

__all__ = ["CloseVerdict", "close_ticket", "close_verdict", "closed_event", "closes_ticket"]

_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#([0-9]+)\b", re.IGNORECASE)
_PASSED = "Backtest FN 0; every check row exited 0"


@dataclass(frozen=True)
class CloseVerdict:
    """Whether the ticket may close on this pull request, and why (the failing row when not)."""

    ok: bool
    reason: str


def _cells(body: str) -> list[list[str]]:
    rows = []
    for line in body.splitlines():
        match = _ROW.match(line)
        if match is not None:
            rows.append([cell.strip() for cell in match.group(1).split("|")])
    return rows


def close_verdict(pull: PullRequest) -> CloseVerdict:
    """The gate's verdict on ``pull``: the first rule it breaks, or the passing reason."""
    rows = _cells(pull.body)
    fn_rows = [row for row in rows if row and row[0] == "Backtest FN"]
    if not fn_rows:
        return CloseVerdict(False, "the pull request body has no | Backtest FN | row")
    fn = fn_rows[-1][1] if len(fn_rows[-1]) > 1 else ""
    if fn != "0":
        return CloseVerdict(False, f"| Backtest FN | {fn} |: the backtest missed an offense")
    header = next((i for i, row in enumerate(rows) if row[:3] == ["Check", "Command", "Exit"]), None)
    if header is None:
        return CloseVerdict(False, "the pull request body has no | Check | Command | Exit | table")
    for row in rows[header + 1 :]:
        if len(row) < 3 or set(row[0]) <= {"-", ":", " "}:
            continue
        if row[2] != "0":
            return CloseVerdict(False, f"| {row[0]} | {row[1]} | {row[2]} |: the check did not exit 0")
    for check in pull.checks:
        if check.exit_code != 0:
            return CloseVerdict(
                False, f"check {check.name} (`{check.command}`) exited {check.exit_code} on the head"
            )
    if pull.state != "merged":
        return CloseVerdict(False, f"pull request #{pull.number} is {pull.state}, not merged")
    return CloseVerdict(True, _PASSED)


def closes_ticket(pull: PullRequest) -> int | None:
    """The ticket a pull request says it closes (``Closes #N`` in its body), if any."""
    match = _CLOSES.search(pull.body)
    return int(match.group(1)) if match else None


def close_ticket(forge: WritableForge, ticket: int, pull_number: int, dry_run: bool = False) -> CloseVerdict:
    """Close ``ticket`` when ``pull_number`` passes the gate; else comment the failing row (once)."""
    forge.ticket(ticket)  # NotFoundError names a missing ticket before anything is written
    verdict = close_verdict(forge.pull_request(pull_number))
    if dry_run:
        return verdict
    if verdict.ok:
        forge.close_ticket(ticket)
        return verdict
    body = f"The close-ticket gate kept this ticket open on pull request #{pull_number}: {verdict.reason}"
    if all(comment.body != body for comment in forge.comments(ticket)):
        forge.comment(ticket, body)
    return verdict


def closed_event(ticket: int, pull_number: int, verdict: CloseVerdict) -> TicketClosed:
    """The event that records a passing verdict."""
    return TicketClosed(ticket=ticket, pull_request=pull_number, reason=verdict.reason)
