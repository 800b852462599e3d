"""``labels.tsv``: the labelled instances a backtest judges, one tab-separated row each.

    instance <TAB> +|- <TAB> start (RFC 3339) <TAB> flagged (RFC 3339) or - <TAB> source

Blank lines and lines starting with ``#`` are skipped. A row with the wrong number of fields, a sign
other than ``+``/``-``, a time that does not parse or has no offset, a flagged time before the start,
or an instance labelled twice is a ``LabelsError`` naming ``file:row``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from ouroboros_gates.miners.errors import LabelsError, MinerUsageError
from ouroboros_gates.schemas import LabelRow

__all__ = ["FIELDS", "Labels", "format_time", "parse_labels", "read_labels"]

FIELDS = ("instance", "+/-", "start", "flagged", "source")


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``: ``2026-10-02T18:04:45Z``."""
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Labels:
    """The rows of one labels file, in file order, with the line each came from."""

    file: str
    rows: tuple[LabelRow, ...]
    lines: tuple[int, ...]

    def ordered(self) -> tuple[LabelRow, ...]:
        """The rows ordered by start (rows starting together keep their file order)."""
        return tuple(sorted(self.rows, key=lambda row: row.start))

    def where(self, instance: str) -> str:
        """``file:row`` of an instance's label."""
        for row, line in zip(self.rows, self.lines, strict=True):
            if row.instance == instance:
                return f"{self.file}:{line}"
        return self.file

    def flipped(self, index: int) -> Labels:
        """The same labels with row ``index`` (file order) flipped between + and -."""
        rows = list(self.rows)
        rows[index] = rows[index].model_copy(update={"positive": not rows[index].positive})
        return replace(self, rows=tuple(rows))

    def render(self) -> str:
        """The labels as ``labels.tsv`` text."""
        return "".join(_render(row) for row in self.rows)


def _render(row: LabelRow) -> str:
    flagged = "-" if row.flagged is None else format_time(row.flagged)
    sign = "+" if row.positive else "-"
    return "\t".join((row.instance, sign, format_time(row.start), flagged, row.source)) + "\n"


def _time(text: str, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an RFC 3339 time (e.g. 2026-10-02T18:04:45Z)") from None
    if moment.tzinfo is None or "T" not in text:
        raise ValueError(
            f"{what} {text!r} is not an RFC 3339 time with an offset (e.g. 2026-10-02T18:04:45Z)"
        )
    return moment


def _row(fields: Sequence[str]) -> LabelRow:
    if len(fields) != len(FIELDS):
        raise ValueError(f"{len(fields)} tab-separated fields, expected {len(FIELDS)}: {' '.join(FIELDS)}")
    instance, sign, start, flagged, source = (field.strip() for field in fields)
    if sign not in ("+", "-"):
        raise ValueError(f"the second field is {sign!r}, expected + or -")
    begun = _time(start, "start")
    noticed = _flagged_time(flagged, begun, start)
    return _label_row(instance, sign == "+", begun, noticed, source)


def _flagged_time(flagged: str, begun: datetime, start: str) -> datetime | None:
    """The flagged time (None for ``-``), which cannot be before the start."""
    noticed = None if flagged == "-" else _time(flagged, "flagged time")
    if noticed is not None and noticed < begun:
        raise ValueError(f"flagged at {flagged}, before its start {start}")
    return noticed


def _label_row(
    instance: str, positive: bool, start: datetime, flagged: datetime | None, source: str
) -> LabelRow:
    """The row's record; ``ValueError`` with the first field the schema refuses."""
    try:
        return LabelRow(instance=instance, positive=positive, start=start, flagged=flagged, source=source)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}") from None


@dataclass
class _Rows:
    """The rows read so far, each with its line, and the line each instance was first labelled at."""

    file: str
    rows: list[LabelRow] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)

    def add(self, row: LabelRow, number: int) -> None:
        """Keep the row of line ``number``; ``LabelsError`` if its instance is labelled already."""
        if row.instance in self.seen:
            raise LabelsError(
                self.file,
                number,
                f"{row.instance} is labelled twice (first at row {self.seen[row.instance]})",
            )
        self.seen[row.instance] = number
        self.rows.append(row)
        self.lines.append(number)

    def labels(self) -> Labels:
        """The labels read."""
        return Labels(self.file, tuple(self.rows), tuple(self.lines))


def _skipped(line: str) -> bool:
    """Whether a line is blank or a comment."""
    return not line.strip() or line.lstrip().startswith("#")


def parse_labels(text: str, file: str = "<labels>") -> Labels:
    """Parse labels text; raises ``LabelsError`` naming ``file:row`` at the first bad row."""
    read = _Rows(file)
    # Rows end at "\n" alone (str.splitlines also breaks at form feeds and other separators, which
    # would number rows differently from the file's lines).
    for number, line in enumerate(text.split("\n"), start=1):
        if _skipped(line):
            continue
        try:
            row = _row(line.rstrip("\r\n").split("\t"))
        except ValueError as exc:
            raise LabelsError(file, number, str(exc)) from None
        read.add(row, number)
    return read.labels()


def read_labels(path: Path) -> Labels:
    """Read and parse a labels file; raises ``LabelsError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MinerUsageError(f"{path}: cannot read the labels: {exc}") from exc
    return parse_labels(text, str(path))
