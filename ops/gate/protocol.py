"""The two small protocols of the hook (hot path: stdlib only).

- **Claude Code's**: a ``PreToolUse`` command hook denies by printing ``hookSpecificOutput`` with
  ``permissionDecision: "deny"`` and a reason (shown to the agent), adds context without deciding by
  printing ``additionalContext``, and allows by printing nothing; it always exits 0.
- **The gate server's**: one JSON object per connection each way over a Unix socket. ``decide``
  names the session log and the byte range of the pending call's line in it; the answer carries the
  decision, the exact object the hook prints (``output``, null to allow), the gates that fired, and
  the gates left out because they failed (``problems``).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from typing import Any

__all__ = ["MAX_MESSAGE", "context_output", "decode", "deny_output", "encode"]

MAX_MESSAGE = 4 << 20
"""The longest request or answer either side reads."""


def deny_output(reason: str) -> dict[str, Any]:
    """Claude Code's deny answer for a PreToolUse hook."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def context_output(text: str) -> dict[str, Any]:
    """Claude Code's answer that adds context to a PreToolUse without deciding anything."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


def encode(message: dict[str, Any]) -> bytes:
    """One message on the wire."""
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def decode(data: bytes) -> dict[str, Any]:
    """One message back; ``ValueError`` when it is not a JSON object."""
    message = json.loads(data)
    if not isinstance(message, dict):
        raise ValueError("a protocol message is a JSON object")
    return message
