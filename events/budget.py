"""The fixers' daily budget, enforced atomically in the database: reserve before launch, settle after.

Two side tables in the event log's own database (migration 0010), not replayable (``events.side``):

- ``ouro_fixer_budget_days``: one row per budget day (a date in ``OURO_TIMEZONE``), with what is reserved
  by sessions still running, what settled sessions were charged, and what they spent past their
  reservations (migration 0012).
- ``ouro_fixer_reservations``: one row per ticket (at most one session per ticket, by its primary key),
  with the amount reserved and, once settled, the amount charged and the overrun.

A reservation is one conditional statement on the day's row::

    UPDATE ouro_fixer_budget_days SET reserved_usd = reserved_usd + :amount
     WHERE day = :day AND spent_usd + overrun_usd + reserved_usd + :amount <= :cap

On PostgreSQL the row lock serialises concurrent reservations and the condition is re-read after the
wait; on SQLite the write transaction begins IMMEDIATE. Either way N concurrent launches can never
reserve more than the cap. A session is stopped at the first cost reading that reaches its reservation;
its settle charges the cap what it spent up to its reservation and never more, which frees the rest of
the day, and records anything past the reservation as its overrun, a figure of its own (the agent's
last reading can jump past the reservation at once; the day's charges never pass the cap for it).

A session whose spend was not reported in full (its agent killed with its task, its worker lost, or the
agent ending without its cost) is settled at an estimate: at least its whole reservation, its last reading
when that is more. What it spent is unknown, never taken as nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import Column, Float, Integer, String, Table, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Executable

from ouroboros_gates.events.side import SideTables
from ouroboros_gates.events.tables import metadata

__all__ = [
    "Budget",
    "Reservation",
    "Settlement",
    "budget_day",
    "budget_days",
    "reservations",
]

budget_days = Table(
    "ouro_fixer_budget_days",
    metadata,
    Column("day", String(10), primary_key=True),
    Column("reserved_usd", Float, nullable=False),
    Column("spent_usd", Float, nullable=False),
    Column("overrun_usd", Float, nullable=False, server_default=text("0")),
)

reservations = Table(
    "ouro_fixer_reservations",
    metadata,
    Column("ticket", Integer, primary_key=True),
    Column("day", String(10), nullable=False),
    Column("amount_usd", Float, nullable=False),
    Column("spent_usd", Float, nullable=True),
    Column("reserved_at", String(40), nullable=False),
    Column("overrun_usd", Float, nullable=False, server_default=text("0")),
)


def budget_day(now: datetime, zone: str) -> date:
    """The budget's day of ``now``: its calendar date in ``zone`` (America/Los_Angeles by default)."""
    moment = now if now.tzinfo else now.replace(tzinfo=UTC)
    return moment.astimezone(ZoneInfo(zone)).date()


@dataclass(frozen=True)
class Reservation:
    """What one launch may spend: granted, or refused with the reason."""

    ticket: int
    day: str
    amount_usd: float
    granted: bool
    reason: str


@dataclass(frozen=True)
class Settlement:
    """What a settled session was charged against the cap (at most its reservation) and spent past it;
    ``estimated`` when its spend was not reported in full (then it is settled at least at the reservation)."""

    charged_usd: float
    overrun_usd: float
    estimated: bool = False

    @property
    def spent_usd(self) -> float:
        """What the session is taken to have spent: the charge and the overrun."""
        return self.charged_usd + self.overrun_usd


class Budget:
    """The daily cap in the side tables beside the log: ``reserve`` before a launch, ``settle`` after it."""

    def __init__(self, side: SideTables, cap_usd: float, zone: str = "America/Los_Angeles") -> None:
        self.side, self.cap_usd, self.zone = side, cap_usd, zone

    def reserve(self, ticket: int, amount_usd: float, now: datetime) -> Reservation:
        """Reserve ``amount_usd`` for ``ticket``'s one session on ``now``'s day, or say why not."""
        day = budget_day(now, self.zone).isoformat()
        refused = Reservation(ticket, day, 0.0, False, "")
        if self.cap_usd <= 0:
            return _why(refused, "the daily cap is 0 (OURO_FIXER_DAILY_CAP_USD): fixers are off")
        if amount_usd <= 0:
            return _why(refused, f"a session must reserve a positive amount, not {amount_usd}")
        try:
            with self.side.writing() as conn:
                if conn.execute(select(reservations.c.ticket).where(reservations.c.ticket == ticket)).first():
                    return _why(refused, f"ticket #{ticket} already had its fixer session")
                conn.execute(_insert_day(self.side.dialect, day))
                took = conn.execute(
                    update(budget_days)
                    .where(
                        # an overrun was really spent: no launch on a day already past its cap
                        budget_days.c.day == day,
                        budget_days.c.spent_usd
                        + budget_days.c.overrun_usd
                        + budget_days.c.reserved_usd
                        + amount_usd
                        <= self.cap_usd,
                    )
                    .values(reserved_usd=budget_days.c.reserved_usd + amount_usd)
                ).rowcount
                if took != 1:
                    return _why(refused, f"the day's spend would pass the cap of ${self.cap_usd:.2f} ({day})")
                conn.execute(
                    reservations.insert().values(
                        ticket=ticket,
                        day=day,
                        amount_usd=amount_usd,
                        spent_usd=None,
                        reserved_at=now.isoformat(),
                    )
                )
        except IntegrityError:  # a concurrent launch on the same ticket won the primary key
            return _why(refused, f"ticket #{ticket} already had its fixer session")
        return Reservation(
            ticket, day, amount_usd, True, f"reserved ${amount_usd:.2f} of ${self.cap_usd:.2f}"
        )

    def settle(self, ticket: int, spent_usd: float, *, reported: bool = True) -> Settlement:
        """Replace ``ticket``'s reservation by what its session spent, charging the cap at most the
        reservation and recording the rest as the overrun (once; a second settle changes nothing and says
        what the first charged). ``reported=False``: ``spent_usd`` is only what the session reported before
        it was cut off; it is settled at the reservation when that is more."""
        with self.side.writing() as conn:
            row = conn.execute(select(reservations).where(reservations.c.ticket == ticket)).mappings().first()
            if row is None:
                return Settlement(0.0, 0.0)
            if row["spent_usd"] is not None:
                return Settlement(float(row["spent_usd"]), float(row["overrun_usd"]))
            spent_usd = max(spent_usd, 0.0) if reported else max(spent_usd, row["amount_usd"])
            charged = min(spent_usd, row["amount_usd"])
            overrun = max(spent_usd - row["amount_usd"], 0.0)
            conn.execute(
                update(reservations)
                .where(reservations.c.ticket == ticket)
                .values(spent_usd=charged, overrun_usd=overrun)
            )
            conn.execute(
                update(budget_days)
                .where(budget_days.c.day == row["day"])
                .values(
                    reserved_usd=budget_days.c.reserved_usd - row["amount_usd"],
                    spent_usd=budget_days.c.spent_usd + charged,
                    overrun_usd=budget_days.c.overrun_usd + overrun,
                )
            )
        return Settlement(charged, overrun, estimated=not reported)

    def unsettled(self, ticket: int) -> datetime | None:
        """When ``ticket``'s reservation was made, if its session never settled (its worker was lost)."""
        with self.side.reading() as conn:
            row = conn.execute(select(reservations).where(reservations.c.ticket == ticket)).mappings().first()
        if row is None or row["spent_usd"] is not None:
            return None
        return datetime.fromisoformat(row["reserved_at"])

    def day_totals(self, day: str) -> tuple[float, float]:
        """(reserved, charged) on ``day``; zeros before its first reservation. Never past the cap."""
        with self.side.reading() as conn:
            row = conn.execute(select(budget_days).where(budget_days.c.day == day)).mappings().first()
        return (0.0, 0.0) if row is None else (float(row["reserved_usd"]), float(row["spent_usd"]))

    def day_overrun(self, day: str) -> float:
        """What sessions of ``day`` spent past their reservations, beside the cap (0 before any)."""
        with self.side.reading() as conn:
            found = conn.execute(select(budget_days.c.overrun_usd).where(budget_days.c.day == day)).scalar()
        return 0.0 if found is None else float(found)


def _why(refused: Reservation, reason: str) -> Reservation:
    return Reservation(refused.ticket, refused.day, 0.0, False, reason)


def _insert_day(dialect: str, day: str) -> Executable:
    values = {"day": day, "reserved_usd": 0.0, "spent_usd": 0.0, "overrun_usd": 0.0}
    if dialect == "postgresql":
        return postgresql.insert(budget_days).values(**values).on_conflict_do_nothing(index_elements=["day"])
    return sqlite.insert(budget_days).values(**values).on_conflict_do_nothing(index_elements=["day"])
