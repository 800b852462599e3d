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


def _backtest_missed(rows: list[list[str]], pull: PullRequest) -> str | None:
    """The body's last ``| Backtest FN |`` row must read 0."""
    fn_rows = [row for row in rows if row and row[0] == "Backtest FN"]
    if not fn_rows:
        return "the pull request body has no | Backtest FN | row"
    fn = fn_rows[-1][1] if len(fn_rows[-1]) > 1 else ""
    return None if fn == "0" else f"| Backtest FN | {fn} |: the backtest missed an offense"


def _check_row_failed(rows: list[list[str]], pull: PullRequest) -> str | None:
    """Every row of the ``| Check | Command | Exit |`` table (past its rule line) must have exited 0."""
    header = _check_table_header(rows)
    if header is None:
        return "the pull request body has no | Check | Command | Exit | table"
    for row in rows[header + 1 :]:
        if _is_failed_check(row):
            return f"| {row[0]} | {row[1]} | {row[2]} |: the check did not exit 0"
    return None


def _check_table_header(rows: list[list[str]]) -> int | None:
    """The index of the ``| Check | Command | Exit |`` header row, or None."""
    return next((i for i, row in enumerate(rows) if row[:3] == ["Check", "Command", "Exit"]), None)


def _is_failed_check(row: list[str]) -> bool:
    """Whether a row of the check table (not its rule line) records an exit other than 0."""
    return len(row) >= 3 and not set(row[0]) <= {"-", ":", " "} and row[2] != "0"


def _head_check_failed(rows: list[list[str]], pull: PullRequest) -> str | None:
    """Every check the forge reports on the head must have exited 0."""
    failed = next((check for check in pull.checks if check.exit_code != 0), None)
    if failed is None:
        return None
    return f"check {failed.name} (`{failed.command}`) exited {failed.exit_code} on the head"


def _not_merged(rows: list[list[str]], pull: PullRequest) -> str | None:
    return None if pull.state == "merged" else f"pull request #{pull.number} is {pull.state}, not merged"


_RULES = (_backtest_missed, _check_row_failed, _head_check_failed, _not_merged)
"""The gate's rules in the order they are checked; each returns the failing row, or None."""


def close_verdict(pull: PullRequest) -> CloseVerdict:
    """The gate's verdict on ``pull``: the first rule it breaks, or the passing reason."""
    rows = _cells(pull.body)
    for rule in _RULES:
        reason = rule(rows, pull)
        if reason is not None:
            return CloseVerdict(False, reason)
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
