"""The gates a server binds now: ``gates.json`` re-read when it moves, each miner loaded once per digest.

Every decision asks ``GateSet.current()``. One ``stat`` tells whether the cache was rewritten (a miner
accepted or dropped since the last call: it binds, or stops binding, from this call). At most once a
second each gate folder's stamp is checked; when its files moved, their digest is recomputed, and a
miner whose files are no longer the ones accepted stops binding and a recompile of the cache is
started in the background (it binds again once it passes its test again). A miner whose digest
changed is imported afresh: its modules are dropped from ``sys.modules`` first.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import sys
import time
from pathlib import Path

from ouroboros_gates.miners import MinerError, load_miner
from ouroboros_gates.ops.gate.cache import GateEntry, folder_stamp, read_gates
from ouroboros_gates.ops.gate.client import background, module_argv
from ouroboros_gates.ops.gate.evaluate import LoadedGate
from ouroboros_gates.ops.gate.paths import gates_path

__all__ = ["STAMP_EVERY_S", "GateSet"]

STAMP_EVERY_S = 1.0
"""How often the gate folders' stamps are checked (the cache file itself: on every call)."""

log = logging.getLogger("ouroboros_gates.ops.gate")


class GateSet:
    """The loaded gates of one state directory, kept in step with its ``gates.json``."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.tenant = "default"
        self.entries: tuple[GateEntry, ...] = ()
        self.problems: dict[str, str] = {}
        self._seen: tuple[int, int] | None = None
        self._loaded: dict[str, LoadedGate] = {}
        self._stale: dict[str, str] = {}  # gate -> digest of files that are not the accepted ones
        self._stamps: dict[str, tuple[int, int, int]] = {}
        self._checked = 0.0
        self._recompiling: set[str] = set()

    def current(self, tenant: str) -> list[LoadedGate]:
        """The gates that bind a run of ``tenant`` now (generic ones, and that tenant's own)."""
        self._reload()
        if time.monotonic() - self._checked >= STAMP_EVERY_S:
            self._check_stamps()
        scoped = [e for e in self.entries if e.scope == "generic" or self.tenant == tenant]
        return [self._loaded[e.name] for e in scoped if e.name in self._loaded and e.name not in self._stale]

    def _reload(self) -> None:
        seen = self._cache_seen()
        if seen == self._seen:
            return
        self._seen = seen
        self._read_entries()
        self._stale.clear()
        self._stamps = {e.name: e.stamp for e in self.entries}
        self._checked = 0.0
        self.problems = {}
        self._loaded = self._load_entries()
        log.info("gates: %s", ", ".join(f"{e.name} ({e.gate})" for e in self.entries) or "none")

    def _read_entries(self) -> None:
        """The compiled cache's entries and tenant (none, and ``default``, when there is no cache)."""
        compiled = read_gates(self.state)
        self.entries = compiled.gates if compiled else ()
        self.tenant = compiled.tenant if compiled else "default"

    def _cache_seen(self) -> tuple[int, int] | None:
        """The compiled cache's modification time and size (None when there is none): a change reloads."""
        try:
            info = os.stat(gates_path(str(self.state)))
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def _load_entries(self) -> dict[str, LoadedGate]:
        """Every entry loaded: one loaded before from the same files kept, the others loaded afresh; one that
        cannot be loaded is named in ``problems``."""
        loaded: dict[str, LoadedGate] = {}
        for entry in self.entries:
            kept = self._loaded.get(entry.name)
            if kept is not None and _same_files(kept.entry, entry):
                loaded[entry.name] = LoadedGate(entry, kept.miner, kept.rules)
                continue
            try:
                loaded[entry.name] = _load(entry)
            except (MinerError, OSError) as exc:
                self.problems[entry.name] = f"{type(exc).__name__}: {exc}"
                log.warning("gate %s cannot be loaded: %s", entry.name, exc)
        return loaded

    def _check_stamps(self) -> None:
        self._checked = time.monotonic()
        for entry in self.entries:
            gate = self._loaded.get(entry.name)
            stamp = _stamp(entry)
            if gate is None or stamp == self._stamps.get(entry.name):
                continue
            self._stamps[entry.name] = stamp
            self._check_digest(entry, gate, stamp)

    def _check_digest(self, entry: GateEntry, gate: LoadedGate, stamp: tuple[int, int, int]) -> None:
        """A gate whose folder's stamp moved: binding again when its files are the accepted ones, else stale
        (it stops binding) and the cache recompiled in the background."""
        from ouroboros_gates.workers.miner.catalogue import (
            miner_digest,
        )  # rare: only when a miner's files moved

        digest = miner_digest(gate.miner) if stamp[0] >= 0 else "missing"
        if digest == entry.digest:
            self._stale.pop(entry.name, None)
            return
        self._stale[entry.name] = digest
        log.warning("gate %s: its files changed since it was accepted; it stops binding", entry.name)
        self._recompile(entry.name, digest)

    def _recompile(self, name: str, digest: str) -> None:
        if f"{name}:{digest}" in self._recompiling:
            return
        self._recompiling.add(f"{name}:{digest}")
        background(module_argv("ouroboros_gates.ops.gate.cache", "--state", str(self.state)), str(self.state))


def _same_files(kept: GateEntry, entry: GateEntry) -> bool:
    """Whether a gate loaded before was loaded from the files an entry names (same folder, same digest)."""
    return kept.digest == entry.digest and kept.folder == entry.folder


def _stamp(entry: GateEntry) -> tuple[int, int, int]:
    """The gate folder's stamp, ``(-1, -1, -1)`` when it cannot be read (its files gone)."""
    try:
        return folder_stamp(Path(entry.folder))
    except OSError:
        return (-1, -1, -1)


def _package(entry: GateEntry) -> str:
    """The name a miner's modules are imported under."""
    folder = Path(entry.folder)
    if entry.origin == "installed":
        return f"ouroboros_gates.miners.{folder.name}"
    # the private name ``miners.registry`` imports a miner outside the package under
    return f"_ouro_miner_{folder.name}_{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]}"


def _purge(entry: GateEntry) -> None:
    """Drop a miner's modules so that loading it again imports its files as they are now."""
    package = _package(entry)
    for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _load(entry: GateEntry) -> LoadedGate:
    _purge(entry)
    miner = load_miner(Path(entry.folder), entry.origin)
    return LoadedGate(entry, miner, miner.rules())
