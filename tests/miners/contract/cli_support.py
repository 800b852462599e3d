"""``ouro`` run in-process, as the miner contract's tests drive it: (exit status, stdout, stderr)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ouroboros_gates.ops.cli import main


def run_ouro(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str, cwd: Path | None = None
) -> tuple[int, str, str]:
    """Run ``ouro ARGV`` in this process (from ``cwd`` when given) and return its status and output."""
    if cwd is not None:
        monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["ouro", *argv])
    try:
        main()
        status = 0
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err
