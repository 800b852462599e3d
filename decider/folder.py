"""What ``ouro scan PATH…`` reads: exactly the files and folders it is given, from disk, git or no git.

Folders are walked (``.git``, ``.hg``, ``.svn`` and the report folder ``.ouroboros`` left out); a file
whose extension no grammar covers is not a source file and is only counted. Below a given folder the walk
leaves out what is not the project's own source (``LeaveOut``): installed dependencies and caches
(``node_modules``, ``__pycache__``, any virtualenv…), what git ignores when the root is a checkout, what
``--exclude`` names, other projects' code the project ships unless asked (``decider.vendored``: ``vendor/``,
``*.min.js``, bundled libraries; ``ouro scan --vendored`` reads them), and when asked (``ouro scan`` does
unless
``--tests``) test code; a path given as PATH is always read. Bad input never stops a scan: a binary or
huge file, a file that does not parse, a symlink loop or a link that leads outside the scanned root is
skipped with the reason. Every path left out or skipped goes into ``manifest.json`` with its reason.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ouroboros_gates.decider.frameworks import is_manifest
from ouroboros_gates.decider.languages import ParsedFile, language_of, parse_source
from ouroboros_gates.decider.vendored import vendored_by_content, vendored_by_path

__all__ = [
    "MAX_BYTES",
    "NOT_SOURCE",
    "TEST_CODE",
    "FolderScan",
    "LeaveOut",
    "Skipped",
    "excluded_by",
    "is_test_code",
    "read_folder",
    "scan_root",
]

MAX_BYTES = 1_000_000
"""A source file larger than this is skipped as huge (generated or vendored bundles)."""

_PRUNED = frozenset({".git", ".hg", ".svn", ".ouroboros"})

NOT_SOURCE = frozenset(
    {
        "node_modules",
        "bower_components",
        "site-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
"""Folders that hold installed dependencies or caches, never the project's own source: a walk leaves them
out (a folder holding ``pyvenv.cfg``, a virtualenv, too, whatever its name)."""


TEST_CODE = (
    "test",
    "tests",
    "__tests__",
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "*_test.go",
    "*.test.js",
    "*.test.jsx",
    "*.test.ts",
    "*.test.tsx",
    "*.spec.js",
    "*.spec.jsx",
    "*.spec.ts",
    "*.spec.tsx",
    "*Test.java",
    "*Tests.java",
    "*Test.php",
)
"""Test code by the test runners' own conventions (pytest, go test, Jest, JUnit and PHPUnit): a test folder
and everything in it, or a test file. It does not ship, its parameters are fixtures and its secrets
placeholders: a scan leaves it out below a PATH unless asked (``ouro scan --tests``)."""

TEST_REASON = "left out: test code (--tests scans it)"


def is_test_code(path: str) -> bool:
    """Whether ``path`` (relative or absolute) is test code or lies in a test folder."""
    return excluded_by(path, TEST_CODE) is not None


def excluded_by(relative: str, globs: Sequence[str]) -> str | None:
    """The first glob that matches the end of ``relative`` or of a folder it is in (``tests``, ``*.min.js``,
    ``docs/*``): a glob that leaves a folder out leaves out what is in it. None when none does."""
    path = PurePosixPath(relative)
    return next((glob for glob in globs for part in (path, *path.parents[:-1]) if part.match(glob)), None)


@dataclass(frozen=True)
class LeaveOut:
    """What a walk below a given PATH leaves out, and why (a PATH given itself is always read)."""

    exclude: tuple[str, ...] = ()
    """``--exclude`` globs, each matched against the end of a path below the root."""
    ignored: frozenset[str] = frozenset()
    """Paths relative to the root that git ignores (a wholly ignored folder once, with a trailing ``/``)."""
    tests: bool = True
    """Whether test code (``TEST_CODE``) is read; ``read_folder`` reads it below a PATH that is test code
    itself or lies in a test folder (``ouro scan tests``) whatever this says."""
    vendored: bool = False
    """Whether other projects' code a project ships is read (``decider.vendored``: ``vendor/``, ``*.min.js``,
    bundled libraries by name or licence banner, minified scripts)."""

    def reason(self, relative: str, path: Path, is_dir: bool) -> str | None:
        """Why the walk leaves ``path`` (``relative`` to the root) out, or None to read it."""
        return (
            _not_source_folder(path, is_dir)
            or self._ignored(relative, is_dir)
            or self._excluded(relative)
            or self._bundled(relative, is_dir)
            or self._test_code(relative)
        )

    def _ignored(self, relative: str, is_dir: bool) -> str | None:
        """Git ignores the path (a folder by its name with a trailing ``/``)."""
        key = f"{relative}/" if is_dir else relative
        return "left out: ignored by git" if key in self.ignored else None

    def _excluded(self, relative: str) -> str | None:
        """An ``--exclude`` glob matches the path."""
        glob = excluded_by(relative, self.exclude)
        return None if glob is None else f"left out: --exclude {glob}"

    def _bundled(self, relative: str, is_dir: bool) -> str | None:
        """The path is another project's code shipped with this one, unless vendored code is read."""
        return None if self.vendored else vendored_by_path(relative, is_dir=is_dir)

    def _test_code(self, relative: str) -> str | None:
        """The path is test code, unless test code is read."""
        return TEST_REASON if not self.tests and is_test_code(relative) else None


def _not_source_folder(folder: Path, is_dir: bool) -> str | None:
    """Why a folder holds no source of the project (dependencies, caches, a virtualenv), or None."""
    if not is_dir:
        return None
    if folder.name in NOT_SOURCE:
        return f"left out: {folder.name} holds dependencies or caches, not the project's source"
    if (folder / "pyvenv.cfg").is_file():
        return "left out: a virtualenv (pyvenv.cfg)"
    return None


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
    """The parsed source files under one root (paths relative to it), what was skipped, and the other
    files."""

    root: Path
    parsed: dict[str, ParsedFile] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    other_files: int = 0
    manifests: dict[str, str] = field(default_factory=dict)
    """Dependency manifests met on the walk (path -> text): what the repository declares it uses."""

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
        return {
            "root": str(self.root),
            "files": len(self.parsed),
            "other_files": self.other_files,
            "skipped": [s.as_dict() for s in sorted(self.skipped, key=lambda s: s.path)],
        }


def scan_root(paths: Sequence[Path]) -> Path:
    """The folder the scanned paths are reported under: the common folder of every PATH (a file's parent)."""
    if not paths:
        raise ValueError("no PATH given")
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    return Path(os.path.commonpath([str(f) for f in folders]))


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(scan: FolderScan, path: Path, shown: str, vendored: bool = True) -> None:
    """Parse one file into ``scan`` or record why not (``vendored``: read a bundled library too)."""
    language = language_of(shown)
    if language is None:
        _other_file(scan, path, shown)
        return
    real = _resolved(scan, path, shown)
    data = _contents(scan, real, shown) if real is not None else None
    if data is not None:
        _parse(scan, shown, language, data, vendored)


def _other_file(scan: FolderScan, path: Path, shown: str) -> None:
    """Count a file that is not source, keeping it when it is a dependency manifest."""
    scan.other_files += 1
    if is_manifest(shown):
        _manifest(scan, path, shown)


def _parse(scan: FolderScan, shown: str, language: str, data: bytes, vendored: bool) -> None:
    """Parse a source file into ``scan``, or record why not: a bundled library (unless ``vendored``) or a
    syntax error."""
    parsed = parse_source(shown, language, data)
    bundled = None if vendored else vendored_by_content(shown, parsed.lines)
    if bundled is not None:
        scan.skipped.append(Skipped(shown, bundled))
        return
    if parsed.has_errors:
        scan.skipped.append(Skipped(shown, f"does not parse as {language} (tree-sitter: syntax error)"))
        return
    scan.parsed[shown] = parsed


def _resolved(scan: FolderScan, path: Path, shown: str) -> Path | None:
    """Where a file's links lead, within the scanned root; None (the reason recorded) when they lead
    nowhere or outside."""
    try:
        real = path.resolve(strict=True)
    except RuntimeError:
        scan.skipped.append(Skipped(shown, "symlink loop"))
        return None
    except OSError as exc:
        why = "symlink loop" if exc.errno == errno.ELOOP else f"unreadable: {exc.strerror or exc}"
        scan.skipped.append(Skipped(shown, why))
        return None
    if not real.is_relative_to(scan.root):
        scan.skipped.append(Skipped(shown, f"outside the scanned root (a link to {real})"))
        return None
    return real


def _contents(scan: FolderScan, real: Path, shown: str) -> bytes | None:
    """A file's bytes; None (the reason recorded) when it is huge, unreadable or binary."""
    try:
        size = real.stat().st_size
        if size > MAX_BYTES:
            scan.skipped.append(Skipped(shown, f"huge: {size} bytes > {MAX_BYTES}"))
            return None
        data = real.read_bytes()
    except OSError as exc:
        scan.skipped.append(Skipped(shown, f"unreadable: {exc.strerror or exc}"))
        return None
    if b"\0" in data[:8192]:
        scan.skipped.append(Skipped(shown, "binary (a NUL byte in the first 8 KiB)"))
        return None
    return data


def _manifest(scan: FolderScan, path: Path, shown: str) -> None:
    """Keep a dependency manifest's text (a small one, within the root) for framework detection."""
    try:
        real = path.resolve(strict=True)
        if real.is_relative_to(scan.root) and real.stat().st_size <= MAX_BYTES:
            scan.manifests[shown] = real.read_text(encoding="utf-8", errors="replace")
    except (OSError, RuntimeError):
        return


def read_folder(
    paths: Sequence[Path],
    root: Path | None = None,
    leave_out: LeaveOut | None = None,
    progress: Callable[[str], None] | None = None,
) -> FolderScan:
    """Every source file under ``paths`` (folders walked, links followed once, loops and escapes skipped, what
    ``leave_out`` names left out below them; by default dependencies, caches and vendored code); ``progress``
    is told each file read."""
    leave_out = leave_out or LeaveOut()
    base = (root or scan_root(paths)).resolve()
    scan = FolderScan(root=base)
    walker = _Walker(scan, set(), progress)
    for given in paths:
        walker.given(given, leave_out)
    return scan


@dataclass
class _Walker:
    """A folder scan's walk: the folders already walked (links are followed once), where progress goes."""

    scan: FolderScan
    seen_dirs: set[Path]
    progress: Callable[[str], None] | None

    def given(self, given: Path, leave_out: LeaveOut) -> None:
        """Read one PATH: a folder walked, a file read (below a test folder, test code is not left out)."""
        base, scan = self.scan.root, self.scan
        absolute = Path(os.path.abspath(given))
        if _outside(absolute, base):
            scan.skipped.append(Skipped(str(given), f"outside the scanned root {base}"))
            return
        shown_root = absolute if absolute.is_relative_to(base) else absolute.resolve()
        walk = _below(absolute, leave_out)
        if absolute.is_dir():
            self.folder(absolute, shown_root, walk)
        elif not absolute.exists() and not absolute.is_symlink():
            scan.skipped.append(Skipped(str(given), "no such file"))
        else:
            _read(scan, absolute, _relative(base, shown_root))

    def folder(self, absolute: Path, shown_root: Path, walk: LeaveOut) -> None:
        """Walk one given folder, reporting its files under ``shown_root``."""
        for folder, dirs, files in os.walk(absolute, followlinks=True):
            here = Path(folder)
            real = here.resolve()
            shown_here = shown_root / here.relative_to(absolute)
            if not self._first_visit(real, shown_here):
                dirs[:] = []
                continue
            dirs[:] = [n for n in sorted(dirs) if _walks_into(self.scan, here / n, shown_here / n, walk)]
            for name in sorted(files):
                self.file(here / name, _relative(self.scan.root, shown_here / name), walk)

    def _first_visit(self, real: Path, shown_here: Path) -> bool:
        """Whether the walk meets a folder for the first time (a repeat, a link loop, is recorded skipped)."""
        if real in self.seen_dirs:
            shown = _relative(self.scan.root, shown_here)
            self.scan.skipped.append(Skipped(shown, "symlink loop (folder already scanned)"))
            return False
        self.seen_dirs.add(real)
        return True

    def file(self, path: Path, shown: str, walk: LeaveOut) -> None:
        """Read one file of a walked folder, or count it, or record why it is left out."""
        why = walk.reason(shown, path, is_dir=False)
        if why is None:
            _read(self.scan, path, shown, walk.vendored)
            if self.progress is not None:
                self.progress(shown)
        elif language_of(shown) is not None:  # a file that is not source is only counted, left out or not
            self.scan.skipped.append(Skipped(shown, why))
        else:
            self.scan.other_files += 1


def _outside(absolute: Path, base: Path) -> bool:
    """Whether a PATH lies outside the root both as given and where its links lead."""
    return not absolute.resolve().is_relative_to(base) and not absolute.is_relative_to(base)


def _below(absolute: Path, leave_out: LeaveOut) -> LeaveOut:
    """What is left out below a PATH: test code is read below one that is test code or in a test folder."""
    return replace(leave_out, tests=True) if is_test_code(absolute.as_posix()) else leave_out


def _walks_into(scan: FolderScan, folder: Path, shown: Path, leave_out: LeaveOut) -> bool:
    """Whether the walk goes down into ``folder``; when not, why (a version-control or report folder:
    silently)."""
    if folder.name in _PRUNED:
        return False
    relative = _relative(scan.root, shown)
    why = leave_out.reason(relative, folder, is_dir=True)
    if why is None:
        why = _link_escape(scan, folder)
    if why is not None:
        scan.skipped.append(Skipped(relative, why))
    return why is None


def _link_escape(scan: FolderScan, folder: Path) -> str | None:
    """Why a folder's links lead nowhere (a loop) or outside the scanned root, or None."""
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return "symlink loop"
    return None if real.is_relative_to(scan.root) else f"outside the scanned root (a link to {real})"
