"""The fixer's sandbox when the worker is not root: the attacker suite (``test_fixer_sandbox.py``) and the
session tests run again by a worker of uid 65534 with no capabilities (a user namespace that maps the
test's uid to 65534, made by ``unshare``), so the agent gets bwrap's user-namespace mode (``--unshare-user
--disable-userns``, no capabilities) instead of setpriv's. Where the tests already run as a user that is not
root, those files run in that mode themselves and this test has nothing to add."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ouroboros_gates.workers.fixer import find_sandbox

ROOT = Path(__file__).resolve().parents[2]
AS = ["unshare", "--user", "--map-user=65534", "--map-group=65534", "--"]


def _why_not() -> str | None:
    if os.getuid() != 0:
        return "the worker is not root here: test_fixer_sandbox.py runs in the user-namespace mode itself"
    if find_sandbox()[0] is None:
        return find_sandbox()[1]
    if shutil.which("unshare") is None:
        return "no unshare (util-linux) to run a worker that is not root"
    probe = subprocess.run([*AS, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"cannot make a user namespace for a worker that is not root: {probe.stderr.strip()}"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


def test_the_attacker_suite_holds_when_the_worker_is_not_root() -> None:
    files = ["tests/security/test_fixer_sandbox.py", "tests/workers/fixer/test_fixer_session.py"]
    done = subprocess.run(
        [*AS, sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rs", *files],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    said = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, said
    passed = re.search(r"(\d+) passed", done.stdout)
    # Every test of both files that needs no Redis or PostgreSQL ran in that mode (item 3's need them).
    assert passed and int(passed.group(1)) >= 14, said
