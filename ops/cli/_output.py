"""How a report reaches the user: a table on a terminal, whole values anywhere else, or one JSON document.

Piped (``ouro corpus stats … | cat``, an agent's Bash tool), a report is never cut or wrapped: a table becomes
tab-separated lines (its title as a ``#`` line, then a header row), with every value in full, and a line of
text is one line however long. On a terminal a table is rich's, wrapped to the terminal's width. Every
command that prints a report also has ``--json``: a command with a document of its own prints that; the
others print what they would show, collected by ``JsonReport`` as ``{"report": [...]}`` (each table with its
title, columns and rows, each line of text as it reads).

One mechanism for every command: the consoles made here (``console``, ``report_console``) print a rich
``Table`` through ``show_table``, and ``Report`` is a table built for it.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

__all__ = [
    "JsonReport",
    "Report",
    "ReportConsole",
    "console",
    "finish",
    "print_json",
    "report_console",
    "show_table",
]

_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


class ReportConsole(Console):
    """A console whose tables follow the rule above (``show_table``); lines are never wrapped
    (``soft_wrap``) nor highlighted."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """As ``Console.print``; a table among ``objects`` goes through ``show_table``."""
        if not _has_table(objects):
            super().print(*objects, **kwargs)
            return
        for item in objects:
            if isinstance(item, Table):
                show_table(item, self)
            else:
                super().print(item, **kwargs)


class JsonReport(ReportConsole):
    """``--json`` for a command whose report is printed line by line and table by table: what it prints is
    collected in ``items`` (a table as its title, columns and rows; text as one plain line), and ``finish``
    prints ``{"report": items}``. The cells of a numeric (right-aligned) column are JSON numbers."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), soft_wrap=True, highlight=False, width=200)
        self.items: list[dict[str, Any]] = []

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Collect ``objects``: each table on its own, the rest as one line of text (markup taken out)."""
        texts: list[str] = []
        for item in objects:
            if isinstance(item, Table):
                self.items.append(_table_json(item))
            else:
                texts.append(_plain(item, markup=kwargs.get("markup") is not False))
        if texts:
            self.items.append({"text": str(kwargs.get("sep", " ")).join(texts)})


def console(stderr: bool = False) -> ReportConsole:
    """A console that never wraps or cuts a line it does not own (``soft_wrap``), nor highlights; its tables
    are tab-separated lines when it is not a terminal."""
    return ReportConsole(stderr=stderr, soft_wrap=True, highlight=False)


def report_console(as_json: bool) -> ReportConsole:
    """The console of a command with ``--json``: a ``JsonReport`` when asked for, else ``console()``."""
    return JsonReport() if as_json else console()


def finish(out: Console) -> None:
    """Print the JSON document a ``JsonReport`` collected (nothing for another console)."""
    if isinstance(out, JsonReport):
        print_json(json.dumps({"report": out.items}, indent=2, ensure_ascii=False))


def show_table(table: Table, out: Console) -> None:
    """Print ``table``: rich's on a terminal, tab-separated lines otherwise (every value whole)."""
    if out.is_terminal:
        Console.print(out, table)
        return
    title, columns, rows = _table_parts(table)
    lines = [f"# {title}", "\t".join(columns), *("\t".join(cells) for cells in rows)]
    out.file.write("\n".join(lines) + "\n")  # past rich, which would turn the tabs into spaces


class Report:
    """One table of a report, built for ``show_table``: cells are shown as they are (no markup)."""

    def __init__(self, title: str, columns: Sequence[str], right: Sequence[str] = ()) -> None:
        self.table = Table(title=title)
        for name in columns:
            self.table.add_column(name, justify="right" if name in right else "left")

    def add(self, *cells: object, style: str | None = None) -> None:
        """One row (cells are shown with ``str``)."""
        self.table.add_row(*(Text(str(cell)) for cell in cells), style=style)

    def section(self) -> None:
        """A line before the next row (on a terminal)."""
        if self.table.row_count:
            self.table.add_section()

    def show(self, out: Console) -> None:
        """Print the table (``show_table``)."""
        show_table(self.table, out)


def print_json(text: str) -> None:
    """A JSON document on stdout, as it is (no console in between)."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _has_table(objects: tuple[Any, ...]) -> bool:
    """Whether a table is among the objects printed."""
    return any(isinstance(item, Table) for item in objects)


def _plain(item: object, markup: bool = True) -> str:
    """What ``item`` reads as, without rich's markup or styles."""
    if isinstance(item, Text):
        return item.plain
    if isinstance(item, str):
        return Text.from_markup(item).plain if markup else item
    return str(item)


def _table_parts(table: Table) -> tuple[str, list[str], list[list[str]]]:
    """A table's title, column headers and rows, as plain text."""
    columns = list(table.columns)
    return _plain(table.title or ""), [_plain(column.header) for column in columns], _rows(columns)


def _rows(columns: list[Column]) -> list[list[str]]:
    """The rows of a table, as plain text, from its columns' cells (rich keeps the cells by column)."""
    cells = [[_plain(cell) for cell in column.cells] for column in columns]
    return [list(row) for row in zip(*cells, strict=True)] if cells else []


def _table_json(table: Table) -> dict[str, Any]:
    """A table as JSON: its title, its columns, each row by column; a right-aligned (numeric) column's cells
    are numbers where they read as one."""
    title, columns, rows = _table_parts(table)
    numeric = [column.justify == "right" for column in table.columns]
    return {
        "table": title,
        "columns": columns,
        "rows": [
            {
                name: _value(cell) if number else cell
                for name, cell, number in zip(columns, row, numeric, strict=True)
            }
            for row in rows
        ],
    }


def _value(cell: str) -> object:
    """A cell of a numeric column as JSON: a number when it reads as one, else its text (``-``)."""
    if _NUMBER.fullmatch(cell):
        return float(cell) if any(mark in cell for mark in ".eE") else int(cell)
    return cell
