"""How a report reaches the user: a table on a terminal, whole values anywhere else.

Piped (``ouro corpus stats … | cat``, an agent's Bash tool), a report is never cut or wrapped: a table becomes
tab-separated lines (its title as a ``#`` line, then a header row), with every value in full, and a note is
one
line however long. On a terminal a table is rich's, wrapped to the terminal's width. Every command that prints
a report also has ``--json``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

__all__ = ["Report", "console", "print_json"]


def console(stderr: bool = False) -> Console:
    """A console that never wraps or cuts a line it does not own (``soft_wrap``), nor highlights."""
    return Console(stderr=stderr, soft_wrap=True, highlight=False)


class Report:
    """One table of a report: shown by rich on a terminal, as tab-separated lines elsewhere."""

    def __init__(self, title: str, columns: Sequence[str], right: Sequence[str] = ()) -> None:
        self.title = title
        self.columns = tuple(columns)
        self.right = frozenset(right)
        self.rows: list[tuple[tuple[str, ...], str | None]] = []
        self._sections: set[int] = set()

    def add(self, *cells: object, style: str | None = None) -> None:
        """One row (cells are shown with ``str``)."""
        self.rows.append((tuple(str(cell) for cell in cells), style))

    def section(self) -> None:
        """A line before the next row (on a terminal)."""
        self._sections.add(len(self.rows))

    def show(self, out: Console) -> None:
        """Print the table: rich's on a terminal, tab-separated lines otherwise."""
        if out.is_terminal:
            table = Table(title=self.title)
            for name in self.columns:
                table.add_column(name, justify="right" if name in self.right else "left")
            for index, (cells, style) in enumerate(self.rows):
                if index in self._sections:
                    table.add_section()
                table.add_row(*cells, style=style)
            out.print(table)
            return
        lines = [f"# {self.title}", "\t".join(self.columns), *("\t".join(cells) for cells, _ in self.rows)]
        out.file.write("\n".join(lines) + "\n")  # past rich, which would turn the tabs into spaces


def print_json(text: str) -> None:
    """A JSON document on stdout, as it is (no console in between)."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
