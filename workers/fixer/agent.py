"""One agent process in its sandbox: its network proxy, its stdout logged and folded, stopped at its limit.

The agent's stdout (stream-json) is written line by line to the session's log and its cost folded as it
arrives; at the first reading whose folded cost reaches the session's reservation the sandbox is
terminated (bwrap takes every process of the session with it). What the proxy saw, allowed or refused,
is written beside the log (``network.jsonl``). Its spend is reported when it was stopped at a reading or
ended by itself (exit 0) after one; otherwise (killed, failed, silent) only the readings before are known.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.workers.fixer.budget import LiveCost
from ouroboros_gates.workers.fixer.proxy import AllowedHost, ProxyServer
from ouroboros_gates.workers.fixer.sandbox import Mounts, Sandbox
from ouroboros_gates.workers.fixer.seccomp import compiled_filter

__all__ = ["AgentRun", "run_agent"]

_GRACE_S = 30


@dataclass(frozen=True)
class AgentRun:
    """What one agent process cost (its last folded reading), how it stopped, and whether that cost is its
    whole spend (``reported``)."""

    cost_usd: float
    stopped: str
    reported: bool


def run_agent(
    sandbox: Sandbox,
    argv: Sequence[str],
    mounts: Mounts,
    env: Mapping[str, str],
    *,
    hosts: Sequence[AllowedHost],
    log: Path,
    limit_usd: float,
    cost: LiveCost | None = None,
) -> AgentRun:
    """Run ``argv`` sandboxed with a network only to ``hosts``; log, fold (into ``cost``, which the caller
    can read even when this raises) and stop it at ``limit_usd``."""
    with ExitStack() as stack:
        program = stack.enter_context(compiled_filter())
        theirs = _start_proxy(stack, hosts, log)
        control_fd = None if theirs is None else theirs.fileno()
        command = sandbox.command(argv, mounts, env, seccomp_fd=program.fileno(), control_fd=control_fd)
        process = _spawn(
            command, mounts.worktree, [fd for fd in (program.fileno(), control_fd) if fd is not None]
        )
        if theirs is not None:
            theirs.close()  # the sandbox holds its end now: the proxy sees it close when the sandbox ends
        ran = _fold(process, log, limit_usd, LiveCost() if cost is None else cost)
    return ran


def _start_proxy(stack: ExitStack, hosts: Sequence[AllowedHost], log: Path) -> socket.socket | None:
    """The sandbox's end of the control socket of a proxy to ``hosts`` (None with no hosts); when the stack
    closes, that end is closed and the proxy stopped and its attempts written beside the log."""
    if not hosts:
        return None
    ours, theirs = socket.socketpair()
    stack.callback(theirs.close)
    stack.callback(_record, ProxyServer(ours, hosts).start(), log.with_name("network.jsonl"))
    return theirs


def _spawn(argv: list[str], cwd: Path, fds: Sequence[int]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=tuple(fds),
        )
    except OSError as exc:
        raise PermanentError(f"cannot start the fixer sandbox {argv[0]!r}: {exc}") from exc


def _fold(process: subprocess.Popen[bytes], log: Path, limit_usd: float, cost: LiveCost) -> AgentRun:
    """Log and fold the agent's stdout; stop it at the reservation. The last reading is what it cost,
    even past the reservation: the ledger is honest (the budget charges the cap at most the reservation)."""
    at_limit = _follow_to_limit(process, log, limit_usd, cost)
    _wait_for_end(process)
    return _outcome(process, cost, at_limit, limit_usd)


def _follow_to_limit(process: subprocess.Popen[bytes], log: Path, limit_usd: float, cost: LiveCost) -> bool:
    """Follow the agent's stdout, terminating it at the reservation; whether it reached it. Anything that
    interrupts the following (the task's time limit, a stop) kills the agent: it does not outlive its task."""
    assert process.stdout is not None
    try:
        at_limit = _follow(process.stdout, log, limit_usd, cost)
        if at_limit:
            process.terminate()
    except BaseException:
        process.kill()
        process.wait()
        raise
    return at_limit


def _wait_for_end(process: subprocess.Popen[bytes]) -> None:
    """Wait for the agent to end, killing it after the grace period."""
    try:
        process.wait(timeout=_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _outcome(process: subprocess.Popen[bytes], cost: LiveCost, at_limit: bool, limit_usd: float) -> AgentRun:
    """How the agent stopped, and whether its last reading is its whole spend."""
    if at_limit:
        stopped = f"stopped at its reservation (${cost.total:.2f} of ${limit_usd:.2f})"
        return AgentRun(cost.total, stopped, reported=True)
    if process.returncode != 0 or not cost.seen:
        why = f"exit {process.returncode}" if process.returncode != 0 else "no cost reported"
        return AgentRun(cost.total, f"its turn ended ({why})", reported=False)
    return AgentRun(cost.total, "its turn ended", reported=True)


def _follow(stdout: IO[bytes], log: Path, limit_usd: float, cost: LiveCost) -> bool:
    """Append each line of the agent's stdout to the log and feed it to the cost, until the stream ends or
    the cost reaches the reservation; whether it reached it."""
    with log.open("ab") as written:
        for line in stdout:
            written.write(line if line.endswith(b"\n") else line + b"\n")
            written.flush()
            cost.feed(line)
            if cost.total >= limit_usd:
                return True
    return False


def _record(proxy: ProxyServer, path: Path) -> None:
    proxy.close()
    with path.open("a", encoding="utf-8") as out:
        for attempt in proxy.attempts:
            out.write(json.dumps(asdict(attempt)) + "\n")
