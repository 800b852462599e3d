"""The local forge's write side: a directory beside the read-only forge that holds what was written.

The shipped forge (``examples/forge``) is never modified; writes land in a *writes directory* (the
embedded default's is ``<state>/forge``) with the same layout, and the local forge reads it over the
shipped one:

- ``pulls/<n>.json``    a pull request opened here, or a shipped one after it was merged (state ``merged``)
- ``tickets/<n>.json``  a shipped ticket after it was closed
- ``comments/<n>.jsonl`` comments on issue or pull request ``n``, one JSON object a line, oldest first
- ``claims/<n>``        the number ``n`` claimed by a pull request being opened

Every file is written to a temporary name and renamed, so a reader never sees half a document; comments
are appended one line per ``write``. Foreign errors become ``ForgeError`` here.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from ouroboros_gates.forge.base import Comment, ForgeError

__all__ = ["append_comment", "claim_number", "read_comments", "write_document"]


def write_document(path: Path, document: dict[str, Any]) -> None:
    """Write ``document`` to ``path`` atomically (temporary file, then rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.replace(scratch, path)
    except OSError as exc:
        raise ForgeError(f"{path}: cannot write: {exc}") from exc


def claim_number(claims: Path, taken: list[int]) -> int:
    """The next number after ``taken`` and every earlier claim, claimed by creating ``claims/<n>``
    exclusively: two agents opening pull requests at once never get the same number."""
    try:
        claims.mkdir(parents=True, exist_ok=True)
        number = max([0, *taken, *(int(p.name) for p in claims.iterdir() if p.name.isdigit())]) + 1
        while True:
            try:
                os.close(os.open(claims / str(number), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                return number
            except FileExistsError:
                number += 1
    except OSError as exc:
        raise ForgeError(f"{claims}: cannot claim a number: {exc}") from exc


def append_comment(folder: Path, number: int, author: str, body: str, at: datetime) -> Comment:
    """Append one comment on issue or pull request ``number``; its id follows its content and place."""
    path = folder / f"{int(number)}.jsonl"
    seen = len(read_comments(folder, number))
    digest = hashlib.sha256(f"{number}\0{seen}\0{author}\0{body}".encode()).hexdigest()
    comment = Comment(id=int(digest[:12], 16) or 1, author=author, created_at=at, body=body)
    line = json.dumps(
        {"id": comment.id, "author": author, "created_at": at.isoformat(), "body": body}, ensure_ascii=False
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError as exc:
        raise ForgeError(f"{path}: cannot append a comment: {exc}") from exc
    return comment


def read_comments(folder: Path, number: int) -> tuple[Comment, ...]:
    """The comments written on ``number``, oldest first (none when nothing was written)."""
    path = folder / f"{int(number)}.jsonl"
    if not path.is_file():
        return ()
    comments: list[Comment] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ForgeError(f"{path}: cannot read: {exc}") from exc
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            comments.append(
                Comment(
                    id=int(data["id"]),
                    author=str(data["author"]),
                    created_at=datetime.fromisoformat(data["created_at"]),
                    body=str(data["body"]),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ForgeError(f"{path}:{lineno}: malformed comment: {exc}") from exc
    return tuple(comments)
