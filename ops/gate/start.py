"""The gate server's entry point: take the state directory's lock first, import the server after.

    python -P -m ouroboros_gates.ops.gate.start --state DIR [--idle-s S]     (the hook; ``ouro hooks serve``)

When no server answers, every hook call that finds none starts one: twenty parallel tool calls of a new
session start twenty. Only the one that takes ``<state>/gate.lock`` goes on to import the miners and the
schemas (about 0.4 s of CPU) and serve; the others leave at once, having imported nothing but the standard
library, so the one that serves is not starved of the CPU the waiting calls need it for.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys

from ouroboros_gates.ops.gate.paths import lock_path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Serve ``--state`` unless a server already holds it (then exit 0 at once)."""
    parser = argparse.ArgumentParser(prog="python -m ouroboros_gates.ops.gate.start")
    parser.add_argument("--state", required=True)
    parser.add_argument("--idle-s", help="seconds idle before exiting (default: OURO_GATE_IDLE_S, 1800)")
    args = parser.parse_args(argv)
    state = os.path.abspath(args.state)
    os.makedirs(state, exist_ok=True)
    lock = open(lock_path(state), "a")  # noqa: SIM115 (held for the server's lifetime)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return 0  # another server holds this state directory
    try:
        from pathlib import Path

        from ouroboros_gates.ops.gate.server import run

        environ = (
            {**os.environ, "OURO_GATE_IDLE_S": args.idle_s} if args.idle_s is not None else dict(os.environ)
        )
        return run(Path(state), lock, environ)
    finally:
        lock.close()


if __name__ == "__main__":
    sys.exit(main())
