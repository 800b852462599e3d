"""The compiled gate cache, ``<state>/gates.json``: which miners bind, at which knee, for which files.

    {"version": 1, "written_at": "…", "tenant": "default",
     "gates": [{"name": "self-match", "folder": "/…/miners/self_match", "origin": "installed",
                "digest": "<sha256 of extract.py, rules.dl, fixtures>", "stamp": [files, bytes, mtime_ns],
                "gate": "deny", "scope": "generic", "severity": "SEVERITY_S2", "knee": null}]}

Only miners that pass their own test are written (``workers.miner.accept.accepted_gates``: the test,
FN = 0 on the walk-forward backtest, the mutation gate), each with the κ* its backtest fitted and the
digest acceptance holds for. ``ouro hooks refresh`` writes it (atomically, by rename), and the gate
server writes it again when a miner's folder changes under it. Reading it is stdlib only: the hook
reads it on every call to learn whether any gate binds at all; the server re-reads it when its mtime
moves, so a miner accepted between two tool calls binds from the next one. ``stamp`` is a cheap
fingerprint (file count, total size, newest mtime) of the files the digest covers: when it moves,
the server recomputes the digest, and a miner whose files no longer match what was accepted stops
binding until it is accepted again.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouroboros_gates.ops.gate.paths import GATES_FILE, gates_path, state_dir

if TYPE_CHECKING:
    from ouroboros_gates.workers.miner.mine import Gate

__all__ = [
    "DIGESTED",
    "VERSION",
    "GateEntry",
    "GateFile",
    "compile_gates",
    "folder_stamp",
    "read_gates",
    "write_gates",
]

VERSION = 1
DIGESTED = frozenset({".py", ".dl", ".tsv", ".jsonl"})
"""The suffixes ``workers.miner.catalogue.miner_digest`` covers (and so the stamp watches)."""

Knee = int | float | str | None


@dataclass(frozen=True)
class GateEntry:
    """One accepted miner as the hook binds it."""

    name: str
    folder: str
    origin: str
    digest: str
    stamp: tuple[int, int, int]
    gate: str
    scope: str
    severity: str
    knee: Knee


@dataclass(frozen=True)
class GateFile:
    """The whole cache: when and for which tenant it was written, and its gates."""

    written_at: str
    tenant: str
    gates: tuple[GateEntry, ...]


def folder_stamp(folder: Path | str) -> tuple[int, int, int]:
    """(files, bytes, newest mtime in ns) over the files a miner's digest covers."""
    count = size = newest = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if os.path.splitext(name)[1] in DIGESTED:
                info = os.stat(os.path.join(root, name))
                count, size, newest = count + 1, size + info.st_size, max(newest, info.st_mtime_ns)
    return count, size, newest


def _entry(raw: Any) -> GateEntry | None:
    if not isinstance(raw, dict):
        return None
    try:
        stamp = tuple(int(part) for part in raw["stamp"])
        knee = raw.get("knee")
        return GateEntry(
            name=str(raw["name"]),
            folder=str(raw["folder"]),
            origin=str(raw["origin"]),
            digest=str(raw["digest"]),
            stamp=(stamp[0], stamp[1], stamp[2]),
            gate=str(raw["gate"]),
            scope=str(raw["scope"]),
            severity=str(raw["severity"]),
            knee=knee if isinstance(knee, int | float | str) else None,
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def read_gates(state: Path | str) -> GateFile | None:
    """The cache of ``state``; None when it is absent or unreadable (a broken entry is left out)."""
    try:
        data = json.loads(Path(gates_path(str(state))).read_bytes())
    except (OSError, ValueError):
        return None
    if not _is_cache(data):
        return None
    entries = tuple(entry for entry in map(_entry, data["gates"]) if entry is not None)
    return GateFile(str(data.get("written_at", "")), str(data.get("tenant", "default")), entries)


def _is_cache(data: Any) -> bool:
    """Whether the file's JSON is a cache of this version, with a list of gates."""
    return isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("gates"), list)


def write_gates(state: Path | str, gates: Iterable[GateEntry], tenant: str, written_at: str) -> Path:
    """Write the cache atomically (a reader sees the old file or the new one, never half of one)."""
    target = Path(gates_path(str(state)))
    target.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "version": VERSION,
        "written_at": written_at,
        "tenant": tenant,
        "gates": [asdict(g) for g in gates],
    }
    partial = target.with_name(f".{GATES_FILE}.{os.getpid()}")
    partial.write_text(json.dumps(body, indent=2) + "\n")
    os.replace(partial, target)
    return target


def compile_gates(state: Path | str, only: Iterable[str] = (), tenant: str | None = None) -> GateFile:
    """Judge every discovered miner (``accepted_gates``) and write the accepted ones to the cache;
    ``only`` keeps the named miners (NAME or folder). Imports the miner worker: never on the hot path."""
    from ouroboros_gates.ops.gate.record import now_iso
    from ouroboros_gates.workers.miner.accept import accepted_gates

    wanted = set(only)
    entries = []
    for accepted in accepted_gates():
        miner = accepted.miner
        if wanted and not wanted & {miner.name, miner.folder.name}:
            continue
        entries.append(_gate_entry(accepted))
    written = now_iso()
    chosen_tenant = tenant or os.environ.get("OURO_TENANT") or "default"
    write_gates(state, entries, chosen_tenant, written)
    return GateFile(written, chosen_tenant, tuple(entries))


def _gate_entry(accepted: Gate) -> GateEntry:
    """An accepted miner as the cache keeps it (a whole-number knee as an int), its folder stamped now."""
    miner = accepted.miner
    knee = accepted.knee
    return GateEntry(
        name=miner.name,
        folder=str(miner.folder),
        origin=miner.origin,
        digest=accepted.digest,
        stamp=folder_stamp(miner.folder),
        gate=miner.gate,
        scope=str(miner.scope),
        severity=str(miner.severity),
        knee=int(knee) if isinstance(knee, float) and knee.is_integer() else knee,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m ops.gate.cache --state DIR``: recompile the cache (what the gate server starts)."""
    args = sys.argv[1:] if argv is None else argv
    state = Path(state_dir(args[args.index("--state") + 1] if "--state" in args else None))
    compiled = compile_gates(state)
    print(f"{len(compiled.gates)} gate(s) written to {state / GATES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
