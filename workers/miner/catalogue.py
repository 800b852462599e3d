"""What a miner worker can run: the miners it finds, each with the digest of its files and its parsed rules.

Finding the miners and digesting their files costs more than mining a run, so a worker holds one
``Catalogue`` for its life (``tasks.py``) and hands it to its cores: it looks at the miners' folders again at
most every ``fresh_s`` (a miner published meanwhile is found on the next look) and parses a version's rules
once. It holds no verdict: whether a version is accepted is recorded in the event log by ``miner.accept``
and read there (``verdicts``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.miners import Miner, Rules, discover
from ouroboros_gates.miners.corpus import JSONL

__all__ = ["GATES_FRESH_S", "Catalogue", "MinerVersion", "discover_versions", "miner_digest"]

GATES_FRESH_S = 2.0
"""How long a worker mines with the miner versions it found before looking at the miners' folders again."""

_DIGESTED = frozenset({".py", ".dl", ".tsv", ".jsonl"})


Signature = tuple[tuple[str, int, int], ...]
"""A miner's digested files with their modification times and sizes: what changes when one of them does."""


def miner_digest(miner: Miner) -> str:
    """sha256 over the miner's extract.py, rules.dl and fixtures: acceptance holds for exactly these."""
    return _content_digest(miner.folder, _signature(miner))


def _signature(miner: Miner) -> Signature:
    files = _digested_files(miner.folder)
    stats = tuple((path, path.stat()) for path in files if path.is_file())
    return tuple((str(path), st.st_mtime_ns, st.st_size) for path, st in stats)


def _digested_files(folder: Path) -> list[Path]:
    """The paths under a miner's folder whose kind is digested (bytecode caches left out), sorted."""
    return sorted(p for p in folder.rglob("*") if p.suffix in _DIGESTED and "__pycache__" not in p.parts)


def _content_digest(folder: Path, signature: Signature) -> str:
    sha = hashlib.sha256()
    for name, _mtime, _size in signature:
        path = Path(name)
        sha.update(str(path.relative_to(folder)).encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()


@dataclass(frozen=True)
class MinerVersion:
    """One version of a miner: the miner as loaded, and the sha256 of its files."""

    miner: Miner
    digest: str

    @property
    def name(self) -> str:
        """The miner's ``NAME``."""
        return self.miner.name


def discover_versions(extra: str | None = None) -> tuple[MinerVersion, ...]:
    """Every discovered miner of harness runs, with the digest of its files as they are now."""
    miners, _broken = discover(extra)
    return tuple(
        MinerVersion(miner, miner_digest(miner)) for miner in miners.values() if JSONL in miner.corpus
    )


class Catalogue:
    """The miner versions a worker runs, looked for at most every ``fresh_s``, with their rules parsed
    once."""

    def __init__(
        self,
        extra: str | None = None,
        fresh_s: float = GATES_FRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.extra, self.fresh_s, self.clock = extra, fresh_s, clock
        self._looked: tuple[float, tuple[MinerVersion, ...]] | None = None
        self._digests: dict[tuple[Path, Signature], str] = {}
        self._rules: dict[tuple[Path, str], Rules] = {}

    def versions(self) -> tuple[MinerVersion, ...]:
        """The miner versions found at the last look, looking again when it is ``fresh_s`` old."""
        now = self.clock()
        if self._looked is None or now - self._looked[0] >= self.fresh_s:
            miners, _broken = discover(self.extra)
            found = tuple(self._version(miner) for miner in miners.values() if JSONL in miner.corpus)
            self._looked = (now, found)
        return self._looked[1]

    def _version(self, miner: Miner) -> MinerVersion:
        """The miner with its digest: its files are read again only when one of them changed."""
        signature = _signature(miner)
        key = (miner.folder, signature)
        if key not in self._digests:
            self._digests[key] = _content_digest(miner.folder, signature)
        return MinerVersion(miner, self._digests[key])

    def rules(self, version: MinerVersion) -> Rules:
        """The version's rules, parsed and checked once (their evaluation plans are kept with them)."""
        key = (version.miner.folder, version.digest)
        if key not in self._rules:
            self._rules[key] = version.miner.rules()
        return self._rules[key]
