"""A report is rich's table on a terminal and tab-separated lines anywhere else, every value whole."""

from __future__ import annotations

import io

from rich.console import Console

from ouroboros_gates.ops.cli._output import Report

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
