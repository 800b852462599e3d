"""Opt-in user adaptation (docs/decider.md, "User adaptation"): the user's dismissals live in their
repository, in ``.ouroboros/decisions/dismissals.jsonl``. Dismissed fingerprints are suppressed after the
engine; from 10 dismissals on they also form a user-local memory (``origin: user``, labelled not vulnerable)
read for that repository only, beside the corpus memory. Nothing here is written to the memory store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.schemas import Example, InstrumentState
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["DISMISSALS", "MIN_USER_EXAMPLES", "dismiss", "dismissals", "user_memory"]

DISMISSALS = Path(".ouroboros") / "decisions" / "dismissals.jsonl"
MIN_USER_EXAMPLES = 10
USER_GROUP = "user-local"


def dismissals(repo: Path) -> list[dict[str, Any]]:
    """The dismissals kept in ``repo`` (a malformed line names its file and line)."""
    path = repo / DISMISSALS
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            out.append(_dismissal(path, number, line))
    return out


def _dismissal(path: Path, number: int, line: str) -> dict[str, Any]:
    """One line's dismissal; a line that is not JSON names its file and line."""
    try:
        found: dict[str, Any] = json.loads(line)
    except json.JSONDecodeError as exc:
        raise OuroError(f"{path}:{number}: not JSON: {exc.msg}") from exc
    return found


def dismiss(repo: Path, finding: dict[str, Any], program_id: str) -> Path:
    """Keep one dismissal of a ``findings.json`` finding (its fingerprint, program id, excerpt and record)."""
    path = repo / DISMISSALS
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "fingerprint": finding["fingerprint"],
        "program_id": program_id,
        "excerpt_sha": finding["excerpt_sha"],
        "family": finding["family"],
        "language": finding["language"],
        "record": finding.get("record"),
        "excerpt": finding.get("excerpt"),
    }
    with path.open("a") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")
    return path


def user_memory(kept: list[dict[str, Any]]) -> Memory:
    """The user-local memory: empty below 10 dismissals; otherwise one ``not vulnerable`` example each."""
    usable = [d for d in kept if d.get("record") and d.get("excerpt")]
    if len(usable) < MIN_USER_EXAMPLES:
        return Memory()
    return Memory([_not_vulnerable(d) for d in usable])


def _not_vulnerable(d: dict[str, Any]) -> MemoryExample:
    """A dismissal as a ``not vulnerable`` example of the user-local group."""
    record = d["record"]
    states = {k: InstrumentState.model_validate(v) for k, v in record["instruments"].items()}
    example = Example(
        excerpt_sha=d["excerpt_sha"],
        x=record["x"],
        y=0,
        group=USER_GROUP,
        language=d["language"],
        family=d["family"],
        instruments=states,
    )
    return MemoryExample(example=example, excerpt=d["excerpt"], source="dismissal", origin="user")
