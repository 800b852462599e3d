"""Gates at the tool-call boundary: accepted miners decide Claude Code's pending tool calls.

    hook (ops.hook, stdlib only)  ──record──▶ <state>/runs/<session>/events.jsonl   (CSF envelope lines)
                                  ──spool───▶ <state>/spool/hooks.jsonl        (flush ▶ IngestRun)
                                  ──decide──▶ gate server (Unix socket)        (PreToolUse only; in a
                                                                                folder only the user enters)
    gate server (ops.gate.server) ──reads───▶ <state>/gates.json               (ouro hooks refresh; a
                                                                                fresh state: compiled first)
                                  ──loads───▶ accepted miners; each session's new lines read once,
                                              local gates' facts kept (ops.gate.facts), warn gates
                                              in a forked child (ops.gate.later)

The modules this package's ``__init__`` exports import only the standard library, because the hook
runs them in a fresh process on every tool call, and each is imported on first use (``__getattr__``),
so importing one imports no other; ``evaluate``, ``facts``, ``gates``, ``session`` and ``server``
import the miners and the schemas, and they and ``later`` run only inside the resident gate server.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HOMES = {
    "FlushReport": "spool",
    "GateEntry": "cache",
    "GateFile": "cache",
    "GateUnavailable": "client",
    "append_line": "record",
    "ask": "client",
    "background": "client",
    "compile_gates": "cache",
    "gate_count": "client",
    "context_output": "protocol",
    "deny_output": "protocol",
    "envelope": "record",
    "flush": "spool",
    "folder_stamp": "cache",
    "notify": "client",
    "read_gates": "cache",
    "run_file": "paths",
    "server_pid": "client",
    "session_name": "paths",
    "socket_path": "sockdir",
    "spool_path": "paths",
    "start_server": "client",
    "state_dir": "paths",
}

__all__ = [
    "FlushReport",
    "GateEntry",
    "GateFile",
    "GateUnavailable",
    "append_line",
    "ask",
    "background",
    "compile_gates",
    "context_output",
    "deny_output",
    "envelope",
    "flush",
    "folder_stamp",
    "gate_count",
    "notify",
    "read_gates",
    "run_file",
    "server_pid",
    "session_name",
    "socket_path",
    "spool_path",
    "start_server",
    "state_dir",
]


def __getattr__(name: str) -> Any:
    """Each name from its module on first use: importing one module of the hot path imports no other."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ops.gate' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"ouroboros_gates.ops.gate.{home}"), name)
