"""Progress of a long command: a bar on a terminal (rich), one summary line when the output is not one.

with ScanProgress(console) as shown:
    read_folder(paths, progress=shown.read)          # files read (no total known yet)
    analyse_folder(scan, key, progress=shown.analysed)
    decide_all(items, engine, progress=shown.decided)
console.print(shown.summary(...))                    # only when not a terminal
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["ScanProgress"]


class ScanProgress:
    """Files read, files analysed, candidates decided: live on a terminal, counted otherwise."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.started = time.monotonic()
        self.files_read = 0
        self.files_analysed = 0
        self.candidates = 0
        self._total: int | None = None
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> ScanProgress:
        if self.live:
            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _advance(self, name: str, description: str, completed: int, total: int | None) -> None:
        if self._bar is None:
            return
        if name not in self._tasks:
            self._tasks[name] = self._bar.add_task(description, total=total)
        self._bar.update(self._tasks[name], completed=completed, total=total)

    def read(self, _path: str) -> None:
        """One more file read from disk (the walk's total is not known ahead)."""
        self.files_read += 1
        self._advance("read", "files read and parsed", self.files_read, None)

    def expect(self, files: int) -> None:
        """How many files the analysis will go through."""
        self._total = files

    def analysed(self, _path: str) -> None:
        """One more file through the instruments."""
        self.files_analysed += 1
        self._advance("analysed", "files through the instruments", self.files_analysed, self._total)

    def decided(self, done: int, total: int) -> None:
        """Candidates decided so far, of how many."""
        self.candidates = total
        self._advance("decided", "candidates decided", done, total)

    def summary(self, counts: dict[str, int], skipped: int) -> str:
        """The one line a non-terminal gets: files, what was left out, candidates and what became of them."""
        seconds = time.monotonic() - self.started
        return (
            f"scanned {self.files_analysed} file(s) ({skipped} left out or skipped) in {seconds:.1f} s: "
            f"{self.candidates} candidate(s) decided, {counts.get('block', 0)} BLOCK, "
            f"{counts.get('advisory', 0)} ADVISORY, {counts.get('drop', 0)} DROP"
        )
