"""The gate server: one resident process per state directory that decides PreToolUse calls.

    python -m ops.gate.server --state DIR [--idle-s 1800]      (the hook starts it; ``ouro hooks serve``)

It keeps what a fresh hook process cannot afford on every call: the miners imported, their rules
checked, and each session's log parsed (``SessionLog``: only new lines are read). Requests come one
JSON line per connection on a Unix socket that only its owner may open (``ops.gate.protocol``):
``decide`` (the pending call's byte range in its session log), ``ping`` (``"drain": true`` first
finishes the deferred work) and ``stop``. Requests are served one at a time, in arrival order.

Deny gates are evaluated before the answer. Warn gates (a verdict about the run, not the call) are
evaluated on the same run plus the pending call right after the answer, one gate at a time between
requests, and what they find rides on the session's next answer: by default (``OURO_HOOK_WARN=next``)
only deny gates stand on the hot path; ``OURO_HOOK_WARN=sync`` evaluates warn gates before answering,
at the cost of every warn gate's time on every call (``benchmarks/corpus.py`` measures both). A gate
whose code raises is left out of that decision and named in the answer's ``problems`` (the hook
prints one warning line); the server never stops on it. It exits after ``--idle-s`` seconds without a
request, on SIGTERM, or on ``stop``.
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from miners import MinerError
from ops.gate.evaluate import Fired, LoadedGate, PendingCall, SessionMemory, new_findings, render, session_item
from ops.gate.gates import GateSet
from ops.gate.paths import lock_path, pid_path, socket_path
from ops.gate.protocol import MAX_MESSAGE, context_output, decode, deny_output, encode
from ops.gate.session import SessionLog
from schemas import Span

__all__ = ["GateServer", "main"]

log = logging.getLogger("ops.gate")
SESSION_IDLE_S = 3600.0


@dataclass
class Session:
    """One session's parsed log, what its decisions have seen, and warnings waiting for its next answer."""

    log: SessionLog
    memory: SessionMemory = field(default_factory=SessionMemory)
    waiting: list[str] = field(default_factory=list)
    used: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Verdict:
    """A decision: ``allow`` or ``deny``, the reason, warn gates' context, and the gates that fired."""

    decision: str = "allow"
    reason: str = ""
    context: str = ""
    fired: tuple[str, ...] = ()

    def output(self) -> dict[str, Any] | None:
        """What the hook prints (None: nothing, which allows)."""
        if self.decision == "deny":
            return deny_output(self.reason + (f"\n\n{self.context}" if self.context else ""))
        return context_output(self.context) if self.context else None

    def to_json(self) -> dict[str, Any]:
        """The answer's fields for this verdict."""
        return {"decision": self.decision, "reason": self.reason, "fired": list(self.fired), "output": self.output()}


class GateServer:
    """Decides pending tool calls for one state directory (see the module docstring)."""

    def __init__(self, state: Path, warn_mode: str = "next") -> None:
        self.state = state.absolute()
        self.gates = GateSet(self.state)
        self.warn_mode = warn_mode
        self.sessions: dict[Path, Session] = {}
        self.later: list[Callable[[], None]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request."""
        op = request.get("op")
        if op == "ping":
            while request.get("drain") and self.later:
                self.later.pop(0)()
            names = [g.entry.name for g in self.gates.current(str(request.get("tenant") or "default"))]
            return {"ok": True, "pid": os.getpid(), "gates": names, "problems": self.gates.problems}
        if op == "decide":
            started = time.perf_counter()
            verdict, problems = self.decide(request)
            return {**verdict.to_json(), "problems": problems, "ms": (time.perf_counter() - started) * 1000}
        return {"error": f"unknown op {op!r}"}

    def _session(self, request: dict[str, Any]) -> Session:
        path = Path(str(request["file"])).absolute()
        if path.name != "events.jsonl" or path.parent.parent != self.state:
            raise ValueError(f"{path} is not a session log of {self.state}")
        now = time.monotonic()
        for key in [k for k, s in self.sessions.items() if now - s.used > SESSION_IDLE_S]:
            del self.sessions[key]
        session = self.sessions.get(path)
        if session is None:
            session = self.sessions[path] = Session(SessionLog(path, path.parent.name))
        session.used = now
        return session

    def decide(self, request: dict[str, Any]) -> tuple[Verdict, dict[str, str]]:
        """Deny when a deny gate has a new verdict with the pending call; tell new warn verdicts."""
        gates = self.gates.current(str(request.get("tenant") or "default"))
        if not gates:
            return Verdict(), dict(self.gates.problems)
        session = self._session(request)
        start, end = int(request["start"]), int(request["end"])
        session.log.advance(end)
        run, path = session.log.run, session.log.path
        (before, _), (after, line) = session.log.upto(start), session.log.upto(end)
        with_pending, so_far = session_item(run, path, after), session_item(run, path, before)
        call = PendingCall(with_pending, so_far, Span(file=str(path), line=line))
        problems = dict(self.gates.problems)
        deny = self._fire([g for g in gates if g.entry.gate == "deny"], session, call, problems)
        warns = [g for g in gates if g.entry.gate != "deny"]
        if self.warn_mode == "next":  # one unit per gate: a decision waits for at most one of them
            self.later += [partial(self._warn_later, gate, session, call) for gate in warns]
            told = []
        else:
            told = [render(f) for f in self._fire(warns, session, call, problems)]
        context = "\n\n".join([*session.waiting, *told])
        session.waiting.clear()
        fired = tuple(dict.fromkeys(f.gate.entry.name for f in deny))
        if deny:
            return Verdict("deny", "\n\n".join(render(f) for f in deny), context, fired), problems
        return Verdict("allow", "", context, fired), problems

    def _fire(
        self, gates: list[LoadedGate], session: Session, call: PendingCall, problems: dict[str, str]
    ) -> list[Fired]:
        fired: list[Fired] = []
        for gate in gates:
            try:
                fired += new_findings(gate, session.memory, call)
            except (MinerError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
                problems[gate.entry.name] = f"{type(exc).__name__}: {exc}"[:300]
                log.warning("gate %s failed: %s", gate.entry.name, exc)
        return fired

    def _warn_later(self, gate: LoadedGate, session: Session, call: PendingCall) -> None:
        problems: dict[str, str] = {}
        session.waiting += [render(f) for f in self._fire([gate], session, call, problems)]


def serve(server: GateServer, idle_s: float) -> None:
    """Accept requests until idle for ``idle_s`` seconds, or until ``stop``."""
    path = Path(socket_path(str(server.state)))
    path.unlink(missing_ok=True)  # the caller holds the lock: any socket left here is a dead server's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_mask)
    listener.listen(64)
    last = time.monotonic()
    try:
        while True:
            wait = 0.0 if server.later else min(1.0, max(idle_s - (time.monotonic() - last), 0.01))
            ready, _, _ = select.select([listener], [], [], wait)
            if not ready:
                if server.later:
                    server.later.pop(0)()
                elif time.monotonic() - last >= idle_s:
                    log.info("idle for %.0fs: exiting", idle_s)
                    return
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            if not _answer(server, conn):
                return
    finally:
        listener.close()
        path.unlink(missing_ok=True)


def _answer(server: GateServer, conn: socket.socket) -> bool:
    """Serve one connection; False when it asked the server to stop."""
    with conn:
        conn.settimeout(5.0)
        try:
            request = decode(_read_all(conn))
            if request.get("op") == "stop":
                conn.sendall(encode({"ok": True, "pid": os.getpid()}))
                return False
            answer = server.handle(request)
        except Exception as exc:  # one bad request never stops the server: it is answered and logged
            log.exception("request failed")
            answer = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        try:
            conn.sendall(encode(answer))
        except OSError:
            log.warning("the hook left before its answer (it allows after its own deadline)")
    return True


def _read_all(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MESSAGE:
            raise ValueError("request too long")
    return b"".join(chunks)


def main(argv: list[str] | None = None) -> int:
    """Run a gate server for ``--state`` unless one already runs there."""
    parser = argparse.ArgumentParser(prog="python -m ops.gate.server")
    parser.add_argument("--state", required=True)
    parser.add_argument("--idle-s", type=float, default=float(os.environ.get("OURO_GATE_IDLE_S", "1800")))
    args = parser.parse_args(argv)
    state = Path(args.state).absolute()
    state.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s gate[%(process)d] %(levelname)s %(message)s")
    lock = open(lock_path(str(state)), "a")  # noqa: SIM115 (held for the server's lifetime)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another server holds this state directory
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.chdir(state)  # not the agent's project directory, which the hook that started it ran in
    pid = Path(pid_path(str(state)))
    pid.write_text(f"{os.getpid()}\n")
    warn_mode = "sync" if os.environ.get("OURO_HOOK_WARN") == "sync" else "next"
    log.info("gate server for %s on %s (warn gates: %s)", state, socket_path(str(state)), warn_mode)
    try:
        serve(GateServer(state, warn_mode), args.idle_s)
    finally:
        pid.unlink(missing_ok=True)
        lock.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
