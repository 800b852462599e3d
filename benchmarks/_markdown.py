"""``--markdown FILE``: a benchmark writes this run's figures into its own block of FILE
(``docs/performance.md``), between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``, with the command that
reproduces them. The docs hold the current figures only; how they moved is in git."""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["add_markdown_option", "against", "write_block"]


def add_markdown_option(parser: argparse.ArgumentParser) -> None:
    """The option every benchmark takes."""
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="also write this run's table into FILE's block for this benchmark",
    )


def against(ours: float, peer: float, unit: str, digits: int = 2) -> list[str]:
    """A row's three cells for one measure: ours, the peer's, and ours / peer (none when the peer took no
    time)."""
    return [
        f"{ours:,.{digits}f} {unit}",
        f"{peer:,.{digits}f} {unit}",
        f"{ours / peer:.2f}x" if peer else "—",
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [list(header), ["---"] * len(header), *[list(row) for row in rows]]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells)


def write_block(
    file: Path | None, name: str, header: Sequence[str], rows: Sequence[Sequence[str]], last: str
) -> None:
    """Replace ``name``'s block of ``file`` (appended when it has none) with this run's table and last
    line."""
    if file is None:
        return
    command = shlex.join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    command = re.sub(r" --markdown \S+", "", command)
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    # The machine is shared: how busy it was while the figures were taken says how far to trust them.
    load = os.getloadavg()[1]
    machine = (
        f"{os.cpu_count()} cores (load average {load:.1f} over the last 5 minutes), "
        f"{platform.python_implementation()} {platform.python_version()}"
    )
    block = (
        f"<!-- bench:{name} -->\n{_table(header, rows)}\n\n{last}\n\n"
        f"Measured {when} on {machine} by `{command}`.\n<!-- /bench:{name} -->"
    )
    text = file.read_text() if file.exists() else ""
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.DOTALL)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else f"{text.rstrip()}\n\n{block}\n"
    file.write_text(text)
