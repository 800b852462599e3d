"""The proposal comment: the fenced ``ouroboros-proposal`` block the loop posts on a mining ticket.

A comment carries one block of TOML between a line ```` ```ouroboros-proposal ```` and a line ```` ``` ````::

    miner = "draft-pr-late"                  # required: the proposed miner's name
    corpus = ["jsonl"]                       # required: jsonl, issue, pull_request, file_at
    instances = ["c7e2a9f4-…", "#52"]        # required: run ids, #N, or commit shas
    predicate = "a gated run's first draft …"  # required
    facts = ["gated(R) :- …", …]             # optional fact lines
    rules = "invisible(R) :- …"              # optional rules.dl text
    labels = [["c7e2a9f4-…", "+"], …]        # optional: [instance, "+" or "-"], each a named instance

Parsing is strict: an unknown key, a missing required one, a value of the wrong type, a label naming an
instance the block does not list, or malformed TOML is a ``ProposalFormatError`` naming the comment's
line and the field. ``render_proposal`` writes the block ``parse_proposal`` reads back unchanged.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ouroboros_gates.schemas import CorpusKind, Proposal
from ouroboros_gates.schemas.errors import PermanentError

__all__ = [
    "FENCE",
    "ProposalBlock",
    "ProposalFormatError",
    "find_block",
    "has_block",
    "parse_proposal",
    "render_proposal",
]

FENCE = "ouroboros-proposal"
"""The info string of the fenced block that carries a proposal."""

_OPEN = re.compile(r"^[ ]{0,3}```[ \t]*" + re.escape(FENCE) + r"[ \t]*$")
_CLOSE = re.compile(r"^[ ]{0,3}```[ \t]*$")
_KEY = re.compile(r"^[ \t]*([A-Za-z0-9_-]+)[ \t]*=")
_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_REQUIRED = ("miner", "corpus", "instances", "predicate")
_OPTIONAL = ("facts", "rules", "labels")
_SIGNS = ("+", "-")


class ProposalFormatError(PermanentError):
    """A proposal block that does not follow the format; ``line`` is 1-based in the comment."""

    def __init__(self, line: int, field: str, message: str) -> None:
        self.line = line
        self.field = field
        self.message = message
        where = f"line {line}" + (f", field {field}" if field else "")
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class ProposalBlock:
    """The TOML text of a comment's proposal block and the comment line its first TOML line is on."""

    text: str
    first_line: int


def has_block(body: str) -> bool:
    """Whether the comment opens a proposal block (well-formed or not)."""
    return any(_OPEN.match(line) for line in _lines(body))


def find_block(body: str) -> ProposalBlock | None:
    """The comment's one proposal block; None when it has none, an error when unclosed or repeated."""
    lines = _lines(body)
    opens = [n for n, line in enumerate(lines) if _OPEN.match(line)]
    if not opens:
        return None
    if len(opens) > 1:
        raise ProposalFormatError(opens[1] + 1, "", f"a second ```{FENCE} block (a comment carries one)")
    start = opens[0] + 1
    end = _closing_line(lines, start)
    if end is None:
        raise ProposalFormatError(opens[0] + 1, "", f"the ```{FENCE} block is never closed with ```")
    return ProposalBlock("\n".join(lines[start:end]) + "\n", start + 1)


def _closing_line(lines: list[str], start: int) -> int | None:
    """The index of the first closing fence from ``start`` on, or None."""
    return next((n for n in range(start, len(lines)) if _CLOSE.match(lines[n])), None)


def _lines(text: str) -> list[str]:
    """Lines split at ``\n`` only (``str.splitlines`` also splits at characters a TOML string may hold)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_proposal(body: str, *, ticket: int, comment_id: int, posted_at: datetime) -> Proposal:
    """The proposal a comment carries; ``ProposalFormatError`` names the line and field of any fault."""
    block = find_block(body)
    if block is None:
        raise ProposalFormatError(1, "", f"no ```{FENCE} block")
    table = _toml(block)
    lines = _key_lines(block)
    _check_keys(table, lines, block.first_line)

    def at(key: str) -> int:
        return lines.get(key, block.first_line)

    miner = _string(table, "miner", at("miner"))
    corpus = _kinds(_strings(table, "corpus", at("corpus")), at("corpus"))
    instances = _strings(table, "instances", at("instances"))
    predicate = _string(table, "predicate", at("predicate"))
    facts = _strings(table, "facts", at("facts")) if "facts" in table else ()
    rules = _string(table, "rules", at("rules")) if "rules" in table else ""
    labels = _labels(table.get("labels", []), instances, at("labels"))
    _check_instances(instances, at("instances"))
    try:
        return Proposal(
            ticket=ticket,
            comment_id=comment_id,
            miner=miner,
            corpus=corpus,
            instances=instances,
            predicate=predicate,
            facts=facts,
            rules=rules,
            labels=labels,
            posted_at=posted_at,
        )
    except ValidationError as exc:
        raise _invalid(exc, at) from exc


def _invalid(exc: ValidationError, at: Callable[[str], int]) -> ProposalFormatError:
    """The model's first complaint, on the line of the field it names."""
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"])
    return ProposalFormatError(at(str(first["loc"][0])), field, first["msg"])


def _check_keys(table: dict[str, Any], lines: dict[str, int], first_line: int) -> None:
    """No unknown key, and every required one."""
    unknown = sorted(set(table) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ProposalFormatError(lines.get(unknown[0], first_line), unknown[0], "unknown field")
    for key in _REQUIRED:
        if key not in table:
            raise ProposalFormatError(first_line, key, "missing (required: " + ", ".join(_REQUIRED) + ")")


def _check_instances(instances: tuple[str, ...], line: int) -> None:
    """No empty instance, and none listed twice."""
    for n, instance in enumerate(instances):
        if not instance.strip():
            raise ProposalFormatError(line, f"instances[{n}]", "an empty instance")
    if len(set(instances)) != len(instances):
        raise ProposalFormatError(line, "instances", "an instance is listed twice")


def render_proposal(proposal: Proposal, note: str = "") -> str:
    """The comment body for ``proposal``: ``note`` (if any), a blank line, then the fenced block."""
    rows = [
        f"miner = {_quote(proposal.miner)}",
        f"corpus = {_array([kind.value for kind in proposal.corpus])}",
        f"instances = {_array(list(proposal.instances))}",
        f"predicate = {_quote(proposal.predicate)}",
        *_optional_rows(proposal),
    ]
    block = "\n".join([f"```{FENCE}", *rows, "```"]) + "\n"
    return f"{note.strip()}\n\n{block}" if note.strip() else block


def _optional_rows(proposal: Proposal) -> list[str]:
    """The rows of the optional fields the proposal has."""
    rows = []
    if proposal.facts:
        rows.append(_facts_row(proposal.facts))
    if proposal.rules:
        rows.append(f"rules = {_quote(proposal.rules)}")
    if proposal.labels:
        rows.append(_labels_row(proposal.labels))
    return rows


def _facts_row(facts: Sequence[str]) -> str:
    """The facts as a TOML array, one fact a line."""
    return "facts = [\n" + "".join(f"  {_quote(fact)},\n" for fact in facts) + "]"


def _labels_row(labels: Sequence[str]) -> str:
    """The labels as a TOML array of ``[instance, sign]`` pairs."""
    pairs = [label.rsplit("\t", 1) for label in labels]
    return "labels = [" + ", ".join(_array(pair) for pair in pairs) + "]"


def _quote(text: str) -> str:
    """A TOML basic string: JSON's escapes are a subset of TOML's, and JSON never writes ``\\/``; TOML
    also refuses a raw DEL, which JSON leaves as is."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _array(items: Sequence[str]) -> str:
    return "[" + ", ".join(_quote(item) for item in items) + "]"


def _toml(block: ProposalBlock) -> dict[str, Any]:
    try:
        return tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        line = int(found.group(1)) if found else 1
        column = f" at column {found.group(2)}" if found else ""
        message = _TOML_AT.sub("", str(exc)).strip().rstrip(".")
        field = _field_at(block, line)
        raise ProposalFormatError(
            block.first_line + line - 1, field, f"malformed TOML{column}: {message}"
        ) from exc


def _key_lines(block: ProposalBlock) -> dict[str, int]:
    """Where each top-level key starts, as a comment line (the first occurrence)."""
    found: dict[str, int] = {}
    depth = 0
    for n, line in enumerate(_lines(block.text)):
        match = _KEY.match(line)
        if depth == 0 and match:
            found.setdefault(match.group(1), block.first_line + n)
        depth = max(0, depth + _depth_change(line))
    return found


_BRACKETS = {"[": 1, "]": -1}


def _depth_change(line: str) -> int:
    """Net ``[``/``]`` outside strings on one line (for arrays that span lines)."""
    change, quoted, escaped = 0, "", False
    for char in line:
        if quoted:
            quoted, escaped = _in_string(char, quoted, escaped)
        elif char in "\"'":
            quoted = char
        elif char == "#":
            break
        else:
            change += _BRACKETS.get(char, 0)
    return change


def _in_string(char: str, quoted: str, escaped: bool) -> tuple[str, bool]:
    """One character inside a string opened by ``quoted``: the quote still open (empty once ``char`` closes
    it), and whether the next character is escaped (only a basic string, ``"``, has escapes)."""
    if escaped:
        return quoted, False
    if char == "\\" and quoted == '"':
        return quoted, True
    return ("" if char == quoted else quoted), False


def _field_at(block: ProposalBlock, line: int) -> str:
    """The key whose value spans block line ``line`` (1-based): the last key starting at or before it."""
    keys = _key_lines(block)
    absolute = block.first_line + line - 1
    before = [(at, key) for key, at in keys.items() if at <= absolute]
    return max(before)[1] if before else ""


def _string(table: dict[str, Any], key: str, line: int) -> str:
    value = table[key]
    if not isinstance(value, str):
        raise ProposalFormatError(line, key, f"expected a string, got {_kind(value)}")
    return value


def _strings(table: dict[str, Any], key: str, line: int) -> tuple[str, ...]:
    value = table[key]
    if not isinstance(value, list):
        raise ProposalFormatError(line, key, f"expected an array of strings, got {_kind(value)}")
    for n, item in enumerate(value):
        if not isinstance(item, str):
            raise ProposalFormatError(line, f"{key}[{n}]", f"expected a string, got {_kind(item)}")
    return tuple(value)


def _kinds(names: tuple[str, ...], line: int) -> tuple[CorpusKind, ...]:
    known = {kind.value: kind for kind in CorpusKind}
    if not names:
        raise ProposalFormatError(line, "corpus", "no corpus kind (one of: " + ", ".join(known) + ")")
    for n, name in enumerate(names):
        if name not in known:
            raise ProposalFormatError(
                line, f"corpus[{n}]", f"unknown kind {name!r}; known: " + ", ".join(known)
            )
    return tuple(known[name] for name in dict.fromkeys(names))


def _labels(value: Any, instances: tuple[str, ...], line: int) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ProposalFormatError(
            line, "labels", f"expected an array of [instance, sign] pairs, got {_kind(value)}"
        )
    return tuple(_label(pair, instances, line, f"labels[{n}]") for n, pair in enumerate(value))


def _label(pair: Any, instances: tuple[str, ...], line: int, where: str) -> str:
    """One ``[instance, sign]`` pair as ``instance<TAB>sign``; the instance must be one of ``instances``."""
    if not _is_pair(pair):
        raise ProposalFormatError(line, where, 'expected [instance, "+" or "-"]')
    instance, sign = pair
    if sign not in _SIGNS:
        raise ProposalFormatError(line, where, f'sign {sign!r} is not "+" or "-"')
    if instance not in instances:
        raise ProposalFormatError(line, where, f"{instance!r} is not one of the instances")
    return f"{instance}\t{sign}"


def _is_pair(pair: Any) -> bool:
    """Whether ``pair`` is an array of two strings."""
    return isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)


def _kind(value: Any) -> str:
    names = {str: "a string", list: "an array", dict: "a table", bool: "a boolean", int: "an integer"}
    return names.get(type(value), type(value).__name__)
