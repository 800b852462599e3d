"""A report is rich's table on a terminal and tab-separated lines anywhere else, every value whole."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from rich.table import Table

from ouroboros_gates.ops.cli._output import Report, ReportConsole, finish, report_console

LONG = "a-run-" + "x" * 150


def _report() -> Report:
    report = Report("Harness logs", ("run", "tool calls"), right=("tool calls",))
    report.add(LONG, 1234567890)
    report.section()
    report.add("total", 1234567890)
    return report


def test_a_pipe_gets_tab_separated_lines() -> None:
    out = io.StringIO()
    _report().show(Console(file=out, width=80))
    assert out.getvalue() == f"# Harness logs\nrun\ttool calls\n{LONG}\t1234567890\ntotal\t1234567890\n"


def test_a_terminal_gets_a_table() -> None:
    out = io.StringIO()
    _report().show(Console(file=out, width=200, force_terminal=True, color_system=None))
    shown = out.getvalue()
    assert "Harness logs" in shown and "│" in shown and LONG in shown and "1234567890" in shown


def test_a_rich_table_printed_by_the_report_console_is_tab_separated_when_piped() -> None:
    out = io.StringIO()
    table = Table(title="Runs ingested")
    table.add_column("run")
    table.add_column("lines", justify="right")
    table.add_row(LONG, "[bold]12[/]")
    shown = ReportConsole(file=out, soft_wrap=True, width=80)
    shown.print(table)
    shown.print("a line " + "y" * 200)
    assert out.getvalue() == f"# Runs ingested\nrun\tlines\n{LONG}\t12\na line {'y' * 200}\n"


def test_json_report_collects_tables_and_lines_numbers_only_in_numeric_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = report_console(as_json=True)
    table = Table(title="Runs ingested")
    table.add_column("run")
    table.add_column("lines", justify="right")
    table.add_column("cost USD", justify="right")
    table.add_row("20261001", "12", "0.7500")
    table.add_row("total", "12", "-")
    out.print("[bold]Ouroboros[/] on corpus")
    out.print(table)
    finish(out)
    assert json.loads(capsys.readouterr().out) == {
        "report": [
            {"text": "Ouroboros on corpus"},
            {
                "table": "Runs ingested",
                "columns": ["run", "lines", "cost USD"],
                "rows": [
                    {"run": "20261001", "lines": 12, "cost USD": 0.75},  # a run's name stays text
                    {"run": "total", "lines": 12, "cost USD": "-"},
                ],
            },
        ]
    }
