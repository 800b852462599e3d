"""Where the hook and the gate server keep things under the state directory.

    <state>/runs/<session>/events.jsonl   one Claude Code session, one CSF envelope line per hook payload
    <state>/spool/hooks.jsonl        runs waiting to be handed to the fleet (``ouro hook --flush``)
    <state>/gates.json               the compiled gate cache (``ouro hooks refresh``)
    <state>/gate.pid, gate.lock, gate.log   the gate server's pid, its single-instance lock, its log

The state directory is the one given (``--state``, ``OURO_STATE``), else the project's own folder in the
user's state directory (``schemas.statedir``), never the user's repository. Sessions live in their own folder,
so no session id can name one of the state's own files (a session ``gates.json`` or ``events.sqlite`` is
``runs/gates.json``, not the gate cache or the event log). A session recorded by an earlier version at
``<state>/<session>/events.jsonl`` goes on there, so one run is never split in two. The gate server's socket
is not here: ``ops.gate.sockdir`` keeps it in a folder only the user can enter.

The hook imports this module in a fresh process on every tool call: it uses ``os.path`` strings and
imports nothing beyond what the interpreter has loaded at start-up (``pathlib`` alone would cost a
visible share of the hook's budget).
"""

from __future__ import annotations

import os
import re  # already loaded by json, which the hook imports anyway

__all__ = [
    "GATES_FILE",
    "RESERVED",
    "RUNS_DIR",
    "SPOOL_DIR",
    "SPOOL_FILE",
    "gates_path",
    "lock_path",
    "log_path",
    "pid_path",
    "run_file",
    "session_name",
    "spool_path",
    "state_dir",
]

GATES_FILE = "gates.json"
RUNS_DIR = "runs"
SPOOL_DIR = "spool"
SPOOL_FILE = "hooks.jsonl"
RESERVED = frozenset({SPOOL_DIR, "gates", "runs"})
"""Session ids that become ``session-<id>``: the state's own folders when sessions lay beside them (kept, so
that a session's run id is the same in both layouts)."""

_NOT_IN_RUN_ID = re.compile(r"[^A-Za-z0-9_.:-]+")


def state_dir(given: str | None = None) -> str:
    """The state directory: ``given``, else ``$OURO_STATE``, else the project's folder in the user's state
    directory (``schemas.statedir``: never inside the repository); absolute, created (git-ignored when it is
    made inside a checkout)."""
    chosen = given or os.environ.get("OURO_STATE")
    if chosen:
        path = os.path.abspath(os.path.expanduser(chosen))
        if os.path.isdir(path):  # the hook's every call: one stat, nothing imported
            return path
    from ouroboros_gates.schemas.statedir import default_state_dir, make_state_dir

    return make_state_dir(path if chosen else default_state_dir())


def session_name(session_id: object) -> str:
    """A run id (and directory name) for a Claude Code session id: what ``harness.run_name``
    would make of it (runs of other characters become ``-``), never a path, never a reserved name."""
    raw = session_id if isinstance(session_id, str) else ""
    name = _NOT_IN_RUN_ID.sub("-", raw).lstrip("-_.:")[:128] or "no-session"
    return f"session-{name}" if name in RESERVED else name


def run_file(state: str, session: str) -> str:
    """The session's harness log: ``<state>/runs/<session>/events.jsonl``, or where an earlier version began
    it."""
    path = os.path.join(state, RUNS_DIR, session, "events.jsonl")
    if os.path.exists(path):
        return path
    earlier = os.path.join(state, session, "events.jsonl")
    return earlier if os.path.isfile(earlier) else path


def spool_path(state: str) -> str:
    """The spool file hooks append to."""
    return os.path.join(state, SPOOL_DIR, SPOOL_FILE)


def gates_path(state: str) -> str:
    """The compiled gate cache."""
    return os.path.join(state, GATES_FILE)


def pid_path(state: str) -> str:
    """The running gate server's pid."""
    return os.path.join(state, "gate.pid")


def lock_path(state: str) -> str:
    """Held by the one gate server of a state directory."""
    return os.path.join(state, "gate.lock")


def log_path(state: str) -> str:
    """Where a gate server (or a flush, or a compile) started by the hook writes its log."""
    return os.path.join(state, "gate.log")
