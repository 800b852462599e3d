"""What ``ouro scan PATH…`` reads: exactly the files and folders it is given, from disk, git or no git.

Folders are walked (``.git``, ``.hg``, ``.svn`` and the report folder ``.ouroboros`` left out); a file
whose extension no grammar covers is not a source file and is only counted. Bad input never stops a
scan: a binary or huge file, a file that does not parse, a symlink loop or a link that leads outside the
scanned root is skipped with the reason, and the reasons go into ``manifest.json``.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from decider.languages import ParsedFile, language_of, parse_source

__all__ = ["MAX_BYTES", "FolderScan", "Skipped", "read_folder", "scan_root"]

MAX_BYTES = 1_000_000
"""A source file larger than this is skipped as huge (generated or vendored bundles)."""

_PRUNED = frozenset({".git", ".hg", ".svn", ".ouroboros"})


@dataclass(frozen=True)
class Skipped:
    """A path the scan did not analyse, and why."""

    path: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        """The manifest's row."""
        return {"path": self.path, "reason": self.reason}


@dataclass
class FolderScan:
    """The parsed source files under one root (paths relative to it), what was skipped, and the other files."""

    root: Path
    parsed: dict[str, ParsedFile] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    other_files: int = 0

    @property
    def pin(self) -> str:
        """A content digest standing for a commit: sha256 over every parsed path and its text."""
        h = hashlib.sha256()
        for path in sorted(self.parsed):
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            h.update("\n".join(self.parsed[path].lines).encode("utf-8", "surrogateescape") + b"\0")
        return h.hexdigest()

    def manifest(self) -> dict[str, object]:
        """``manifest.json``'s ``scanned`` block."""
        return {"root": str(self.root), "files": len(self.parsed), "other_files": self.other_files,
                "skipped": [s.as_dict() for s in sorted(self.skipped, key=lambda s: s.path)]}  # fmt: skip


def scan_root(paths: Sequence[Path]) -> Path:
    """The folder the scanned paths are reported under: the common folder of every PATH (a file's parent)."""
    if not paths:
        raise ValueError("no PATH given")
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    return Path(os.path.commonpath([str(f) for f in folders]))


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(scan: FolderScan, path: Path, shown: str) -> None:
    """Parse one file into ``scan`` or record why not."""
    language = language_of(shown)
    if language is None:
        scan.other_files += 1
        return
    try:
        real = path.resolve(strict=True)
    except RuntimeError:
        scan.skipped.append(Skipped(shown, "symlink loop"))
        return
    except OSError as exc:
        why = "symlink loop" if exc.errno == errno.ELOOP else f"unreadable: {exc.strerror or exc}"
        scan.skipped.append(Skipped(shown, why))
        return
    if not real.is_relative_to(scan.root):
        scan.skipped.append(Skipped(shown, f"outside the scanned root (a link to {real})"))
        return
    try:
        size = real.stat().st_size
        if size > MAX_BYTES:
            scan.skipped.append(Skipped(shown, f"huge: {size} bytes > {MAX_BYTES}"))
            return
        data = real.read_bytes()
    except OSError as exc:
        scan.skipped.append(Skipped(shown, f"unreadable: {exc.strerror or exc}"))
        return
    if b"\0" in data[:8192]:
        scan.skipped.append(Skipped(shown, "binary (a NUL byte in the first 8 KiB)"))
        return
    parsed = parse_source(shown, language, data)
    if parsed.has_errors:
        scan.skipped.append(Skipped(shown, f"does not parse as {language} (tree-sitter: syntax error)"))
        return
    scan.parsed[shown] = parsed


def read_folder(paths: Sequence[Path], root: Path | None = None) -> FolderScan:
    """Every source file under ``paths`` (folders walked, links followed once, loops and escapes skipped)."""
    base = (root or scan_root(paths)).resolve()
    scan = FolderScan(root=base)
    seen_dirs: set[Path] = set()
    for given in paths:
        absolute = Path(os.path.abspath(given))
        if not absolute.resolve().is_relative_to(base) and not absolute.is_relative_to(base):
            scan.skipped.append(Skipped(str(given), f"outside the scanned root {base}"))
            continue
        shown_root = absolute if absolute.is_relative_to(base) else absolute.resolve()
        if not absolute.is_dir():
            if not absolute.exists() and not absolute.is_symlink():
                scan.skipped.append(Skipped(str(given), "no such file"))
                continue
            _read(scan, absolute, _relative(base, shown_root))
            continue
        for folder, dirs, files in os.walk(absolute, followlinks=True):
            here = Path(folder)
            real = here.resolve()
            shown_here = shown_root / here.relative_to(absolute)
            if real in seen_dirs:
                scan.skipped.append(Skipped(_relative(base, shown_here), "symlink loop (folder already scanned)"))
                dirs[:] = []
                continue
            seen_dirs.add(real)
            kept = []
            for name in sorted(dirs):
                if name in _PRUNED:
                    continue
                link = here / name
                try:
                    link.resolve(strict=True)
                except (OSError, RuntimeError):
                    scan.skipped.append(Skipped(_relative(base, shown_here / name), "symlink loop"))
                    continue
                if not link.resolve().is_relative_to(base):
                    scan.skipped.append(Skipped(_relative(base, shown_here / name),
                                                f"outside the scanned root (a link to {link.resolve()})"))  # fmt: skip
                    continue
                kept.append(name)
            dirs[:] = kept
            for name in sorted(files):
                _read(scan, here / name, _relative(base, shown_here / name))
    return scan
