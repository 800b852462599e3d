"""The gate server: one resident process per state directory that decides PreToolUse calls.

    python -m ops.gate.start --state DIR [--idle-s 1800]      (the hook starts it; ``ouro hooks serve``)

It keeps what a fresh hook process cannot afford on every call: the miners imported, their rules
checked, and each session's state (``Session``): where its log has been read to (``SessionLog``: only
the lines appended since the last request are read), the facts of its local gates kept line by line
(``ops.gate.facts``), what its decisions have seen, and the warnings waiting for its next answer; never
its events, so a session's memory grows with its gates' matches, not with its length, and a session idle
for ``SESSION_IDLE_S`` is dropped. Requests come one JSON line per connection on a Unix socket that
only its owner may open (``ops.gate.protocol``; the socket's loop: ``ops.gate.listen``): ``decide`` (the
pending call's byte range in its session log), ``ping`` (``"drain": true`` first waits for the deferred
work) and ``stop``. Requests are served one at a time, in arrival order; a decision depends only on the
lines before the call's own (``ops.gate.evaluate``), so parallel calls of one session are judged as if one
after the other, in the order they were recorded, whatever order they arrive in.

Deny gates are evaluated before the answer. Warn gates (a verdict about the run, not the call) are
evaluated on the same run plus the pending call in a forked child (``ops.gate.later``: the latest call
of each session, one child at a time), and what they find rides on the session's next answer: by default
(``OURO_HOOK_WARN=next``) only deny gates stand on the hot path; ``OURO_HOOK_WARN=sync`` evaluates warn
gates before answering, at the cost of every warn gate's time on every call (``benchmarks/hook.py``
measures the hook). A gate whose code raises is left out of that decision and named in the answer's
``problems`` (the hook prints one warning line); the server never stops on it. No payload holds it either
(``ops.gate.budget``): a line whose facts take over ``LINE_BUDGET_S`` for a gate is left out for it, a deny
gate that takes over ``GATE_BUDGET_S`` on a decision is left out of that decision, and a request still
running after ``WEDGED_S`` (stuck where no signal reaches) ends the server, which the next hook starts
again. The deny gates a decision left out are named in its ``unjudged``: the hook allows the call, or
denies it when the operator asked for ``OURO_GATE_FAIL=closed``. It exits after ``--idle-s`` seconds
without a request, on SIGTERM, or on ``stop``. Started on a state with no compiled gates (a fresh
install), it compiles them (``ops.gate.cache``) before it listens.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

from ouroboros_gates.miners import MinerError
from ouroboros_gates.ops.gate.budget import OverBudget, budget, install
from ouroboros_gates.ops.gate.cache import GateEntry, compile_gates, read_gates
from ouroboros_gates.ops.gate.evaluate import (
    Atom,
    Fired,
    LoadedGate,
    PendingCall,
    SessionMemory,
    new_findings,
    render,
)
from ouroboros_gates.ops.gate.facts import LINE_BUDGET_S, DecisionFacts, SessionFacts
from ouroboros_gates.ops.gate.gates import GateSet
from ouroboros_gates.ops.gate.later import Later
from ouroboros_gates.ops.gate.listen import WEDGED_S, serve
from ouroboros_gates.ops.gate.paths import RUNS_DIR, pid_path
from ouroboros_gates.ops.gate.protocol import context_output, deny_output
from ouroboros_gates.ops.gate.session import SessionLog
from ouroboros_gates.ops.gate.settings import server_settings
from ouroboros_gates.ops.gate.sockdir import UnsafeFolder
from ouroboros_gates.schemas import Span

__all__ = ["GATE_BUDGET_S", "WEDGED_S", "GateServer", "run"]

log = logging.getLogger("ouroboros_gates.ops.gate")
SESSION_IDLE_S = 3600.0
GATE_BUDGET_S = 1.0
"""The longest a deny gate may take on one decision (a gate takes a few milliseconds)."""


@dataclass
class Session:
    """One session's state: its log read so far, its local gates' facts, what its decisions have seen, and
    the warnings waiting for its next answer."""

    log: SessionLog
    facts: SessionFacts
    memory: SessionMemory = field(default_factory=SessionMemory)
    waiting: list[str] = field(default_factory=list)
    used: float = field(default_factory=time.monotonic)


WarnResult = tuple[list[str], dict[str, set[Atom]], dict[str, str]]
"""What a warn job sends back: the warnings to tell, the verdicts told per gate, and the gates that failed."""


@dataclass(frozen=True)
class Verdict:
    """A decision: ``allow`` or ``deny``, the reason, warn gates' context, and the gates that fired."""

    decision: str = "allow"
    reason: str = ""
    context: str = ""
    fired: tuple[str, ...] = ()
    unjudged: tuple[str, ...] = ()

    def output(self) -> dict[str, Any] | None:
        """What the hook prints (None: nothing, which allows)."""
        if self.decision == "deny":
            return deny_output(self.reason + (f"\n\n{self.context}" if self.context else ""))
        return context_output(self.context) if self.context else None

    def to_json(self) -> dict[str, Any]:
        """The answer's fields for this verdict."""
        fields = {"decision": self.decision, "reason": self.reason, "fired": list(self.fired)}
        return {**fields, "unjudged": list(self.unjudged), "output": self.output()}


class GateServer:
    """Decides pending tool calls for one state directory (see the module docstring)."""

    def __init__(self, state: Path, warn_mode: str = "next") -> None:
        self.state = state.absolute()
        self.gates = GateSet(self.state)
        self.warn_mode = warn_mode
        self.sessions: dict[Path, Session] = {}
        self.later = Later()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request."""
        op = request.get("op")
        answer = {"ping": self._ping, "decide": self._timed_decision}.get(str(op))
        if answer is None:
            return {"error": f"unknown op {op!r}"}
        return answer(request)

    def _ping(self, request: dict[str, Any]) -> dict[str, Any]:
        """Alive: the pid, the tenant's gates and the gates' problems (``drain``: after the deferred work)."""
        if request.get("drain"):
            self.later.drain()
        names = [g.entry.name for g in self.gates.current(_tenant(request))]
        return {"ok": True, "pid": os.getpid(), "gates": names, "problems": self.gates.problems}

    def _timed_decision(self, request: dict[str, Any]) -> dict[str, Any]:
        """The decision with its problems and how long it took (ms)."""
        started = time.perf_counter()
        verdict, problems = self.decide(request)
        return {**verdict.to_json(), "problems": problems, "ms": (time.perf_counter() - started) * 1000}

    def _session(self, request: dict[str, Any]) -> Session:
        path = Path(str(request["file"])).absolute()
        self._check_session_log(path)
        now = time.monotonic()
        self._drop_idle(now)
        session = self.sessions.get(path)
        if session is None:
            log = SessionLog(path, path.parent.name)
            session = self.sessions[path] = Session(log, SessionFacts(log))
        session.used = now
        return session

    def _check_session_log(self, path: Path) -> None:
        """A ``ValueError`` unless ``path`` is a session's ``events.jsonl`` under this state's folder.

        Resolved for the check alone (``..`` and links cannot lead out); spans keep the path as the hook
        gave it."""
        folders = (self.state.resolve(), self.state.resolve() / RUNS_DIR)  # the second: an earlier version's
        if path.name != "events.jsonl" or path.resolve().parent.parent not in folders:
            raise ValueError(f"{path} is not a session log of {self.state}")

    def _drop_idle(self, now: float) -> None:
        """Forget the sessions idle for over ``SESSION_IDLE_S``."""
        for key in [k for k, s in self.sessions.items() if now - s.used > SESSION_IDLE_S]:
            del self.sessions[key]

    def decide(self, request: dict[str, Any]) -> tuple[Verdict, dict[str, str]]:
        """Deny when a deny gate has a new verdict with the pending call; tell new warn verdicts."""
        tenant = _tenant(request)
        gates = self.gates.current(tenant)
        problems = dict(self.gates.problems)
        if not gates:
            return Verdict(unjudged=self._unjudged(tenant, problems)), problems
        session = self._session(request)
        start, end = int(request["start"]), int(request["end"])
        session.log.advance(end, partial(session.facts.add, gates))
        line = session.log.line_at(end)
        span = Span(file=str(session.log.path), line=line)
        offsets = {line: end, line - 1: start}  # the pending call's line begins where the one before ends
        call = PendingCall(DecisionFacts(session.facts, offsets), span)
        denies, warns = _by_kind(gates)
        deny = self._deny(denies, session, call, problems)
        context = self._context(warns, session, call, offsets, problems)
        return _verdict(deny, context, self._unjudged(tenant, problems)), problems

    def _context(
        self,
        warns: list[LoadedGate],
        session: Session,
        call: PendingCall,
        offsets: dict[int, int],
        problems: dict[str, str],
    ) -> str:
        """The warn verdicts told on this answer: those waiting from earlier calls, and (``sync``) this
        call's; with ``next`` this call's are found off the request path, to be told on a later answer."""
        told = self._told_now(warns, session, call, problems) if self.warn_mode == "sync" else []
        context = "\n\n".join([*session.waiting, *told])
        session.waiting.clear()
        if warns and self.warn_mode == "next":
            later = PendingCall(DecisionFacts(session.facts, offsets), call.line)
            compute = partial(self._warn_compute, warns, session, later)
            self.later.submit(session.log.path, compute, partial(self._warn_apply, session))
        return context

    def _told_now(
        self, warns: list[LoadedGate], session: Session, call: PendingCall, problems: dict[str, str]
    ) -> list[str]:
        """The warn gates' new verdicts on this call, rendered (``sync``: before the answer)."""
        return [render(f) for f in self._fire(warns, session, call, problems)]

    def _deny(
        self, gates: list[LoadedGate], session: Session, call: PendingCall, problems: dict[str, str]
    ) -> list[Fired]:
        """The deny gates' new verdicts; a gate whose facts for the pending line were left out, or that runs
        past ``GATE_BUDGET_S``, is named in ``problems`` instead."""
        line = call.line.line
        for gate in gates:
            if session.facts.skipped(gate, line):
                problems[gate.entry.name] = f"{call.line.file}:{line}: its facts took over {LINE_BUDGET_S}s"
        judged = [g for g in gates if g.entry.name not in problems]
        return self._fire(judged, session, call, problems, GATE_BUDGET_S)

    def _unjudged(self, tenant: str, problems: dict[str, str]) -> tuple[str, ...]:
        """The deny gates that bind ``tenant`` and could not judge this call (their names in ``problems``)."""
        bound = {e.name for e in self.gates.entries if e.gate == "deny" and self._binds(e, tenant)}
        return tuple(sorted(bound & problems.keys()))

    def _binds(self, entry: GateEntry, tenant: str) -> bool:
        """Whether a gate binds ``tenant``: a generic gate binds every tenant, the others their own."""
        return entry.scope == "generic" or self.gates.tenant == tenant

    def _fire(
        self,
        gates: list[LoadedGate],
        session: Session,
        call: PendingCall,
        problems: dict[str, str],
        budget_s: float | None = None,
    ) -> list[Fired]:
        fired: list[Fired] = []
        for gate in gates:
            fired += _fire_one(gate, session, call, problems, budget_s)
        return fired

    def _warn_compute(self, gates: list[LoadedGate], session: Session, call: PendingCall) -> WarnResult:
        """In a child: the warn gates' new verdicts, rendered, and what each gate has told."""
        problems: dict[str, str] = {}
        told = [
            render(f) for f in self._fire(gates, session, call, problems)
        ]  # no budget: a child, limited whole
        return told, {g.entry.name: session.memory.told.get(g.entry.name, set()) for g in gates}, problems

    def _warn_apply(self, session: Session, result: WarnResult) -> None:
        """Here: keep what a warn job told, for the session's next answer."""
        told, seen, problems = result
        for name, atoms in seen.items():
            session.memory.told.setdefault(name, set()).update(atoms)
        session.waiting += told
        for name, problem in problems.items():
            log.warning("gate %s failed: %s", name, problem)


def _tenant(request: dict[str, Any]) -> str:
    """The tenant a request names (``default`` when none)."""
    return str(request.get("tenant") or "default")


def _by_kind(gates: list[LoadedGate]) -> tuple[list[LoadedGate], list[LoadedGate]]:
    """The deny gates and the warn gates, each in their order."""
    denies: list[LoadedGate] = []
    warns: list[LoadedGate] = []
    for gate in gates:
        (denies if gate.entry.gate == "deny" else warns).append(gate)
    return denies, warns


def _verdict(deny: list[Fired], context: str, unjudged: tuple[str, ...]) -> Verdict:
    """Deny with the deny gates' verdicts rendered when any fired, else allow; the warn context either way."""
    fired = tuple(dict.fromkeys(f.gate.entry.name for f in deny))
    if deny:
        return Verdict("deny", "\n\n".join(render(f) for f in deny), context, fired, unjudged)
    return Verdict("allow", "", context, fired, unjudged)


def _fire_one(
    gate: LoadedGate, session: Session, call: PendingCall, problems: dict[str, str], budget_s: float | None
) -> list[Fired]:
    """One gate's new verdicts on the call; a gate that fails, or runs past ``budget_s`` (when given), is
    named in ``problems`` instead, and the others still judge."""
    mine = False
    found: list[Fired] = []  # kept when the alarm rings after the gate returned
    limit: AbstractContextManager[bool] = budget(budget_s) if budget_s else nullcontext(False)
    try:
        with limit as mine:
            found = new_findings(gate, session.memory, call)
    except OverBudget:
        if not mine:
            raise
        problems[gate.entry.name] = f"took over {budget_s}s on this call"
        log.warning(
            "gate %s took over %ss on %s:%d", gate.entry.name, budget_s, call.line.file, call.line.line
        )
    except (MinerError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        problems[gate.entry.name] = f"{type(exc).__name__}: {exc}"[:300]
        log.warning("gate %s failed: %s", gate.entry.name, exc)
    return found


def _compile(state: Path) -> None:
    """Compile the gate cache in this process (which imports the miners anyway), before serving."""
    started = time.monotonic()
    try:
        compiled = compile_gates(state)
    except Exception:  # served without gates (each call allowed); the log says why
        log.exception("compiling the gates of a fresh state failed")
        return
    log.info("compiled %d gate(s) in %.1fs (a fresh state)", len(compiled.gates), time.monotonic() - started)


def run(state: Path, lock: IO[str], environ: Mapping[str, str]) -> int:
    """Serve ``state`` with the settings in ``environ`` until idle; ``lock`` is its single-instance lock,
    held by the caller (``ops.gate.start``), which releases it when this returns."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s gate[%(process)d] %(levelname)s %(message)s")
    # A forked warn child must not hold the lock (it belongs to the open file) past this server's exit.
    os.register_at_fork(after_in_child=lock.close)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    install()
    os.chdir(state)  # not the agent's project directory, which the hook that started it ran in
    pid = Path(pid_path(str(state)))
    pid.write_text(f"{os.getpid()}\n")
    settings, warnings = server_settings(environ)
    for warning in warnings:
        log.warning("%s", warning)
    if read_gates(state) is None:  # a fresh state: its first hook call started this server, and waits for it
        _compile(state)
    log.info("gate server for %s (warn gates: %s)", state, settings.warn)
    try:
        serve(GateServer(state, settings.warn), settings.idle_s)
    except UnsafeFolder as exc:  # never bound where another user could answer: the hooks say it too
        log.error("not serving: %s", exc)
        return 1
    finally:
        pid.unlink(missing_ok=True)
    return 0
