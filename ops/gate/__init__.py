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

from ouroboros_gates._lazy import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ouroboros_gates.ops.gate.cache import GateEntry, GateFile, compile_gates, folder_stamp, read_gates
    from ouroboros_gates.ops.gate.client import (
        GateUnavailable,
        ask,
        background,
        gate_count,
        notify,
        server_pid,
        start_server,
    )
    from ouroboros_gates.ops.gate.paths import run_file, session_name, spool_path, state_dir
    from ouroboros_gates.ops.gate.protocol import context_output, deny_output
    from ouroboros_gates.ops.gate.record import append_line, envelope
    from ouroboros_gates.ops.gate.sockdir import socket_path
    from ouroboros_gates.ops.gate.spool import FlushReport, flush

_HOMES = {
    "FlushReport": "ouroboros_gates.ops.gate.spool",
    "GateEntry": "ouroboros_gates.ops.gate.cache",
    "GateFile": "ouroboros_gates.ops.gate.cache",
    "GateUnavailable": "ouroboros_gates.ops.gate.client",
    "append_line": "ouroboros_gates.ops.gate.record",
    "ask": "ouroboros_gates.ops.gate.client",
    "background": "ouroboros_gates.ops.gate.client",
    "compile_gates": "ouroboros_gates.ops.gate.cache",
    "context_output": "ouroboros_gates.ops.gate.protocol",
    "deny_output": "ouroboros_gates.ops.gate.protocol",
    "envelope": "ouroboros_gates.ops.gate.record",
    "flush": "ouroboros_gates.ops.gate.spool",
    "folder_stamp": "ouroboros_gates.ops.gate.cache",
    "gate_count": "ouroboros_gates.ops.gate.client",
    "notify": "ouroboros_gates.ops.gate.client",
    "read_gates": "ouroboros_gates.ops.gate.cache",
    "run_file": "ouroboros_gates.ops.gate.paths",
    "server_pid": "ouroboros_gates.ops.gate.client",
    "session_name": "ouroboros_gates.ops.gate.paths",
    "socket_path": "ouroboros_gates.ops.gate.sockdir",
    "spool_path": "ouroboros_gates.ops.gate.paths",
    "start_server": "ouroboros_gates.ops.gate.client",
    "state_dir": "ouroboros_gates.ops.gate.paths",
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


__getattr__ = lazy(__name__, _HOMES)
