"""The program (seed 4.1): a signature (code, signals, roles, family -> verdict, family, confidence,
rationale citing lines), its rendering with a byte-identical shared prefix, and the answer's parsing.

A compiled program is one canonical JSON; its id is the sha256 of that JSON. ``kind`` is ``llm-program``
(a chat model answers) or ``memory-vote`` (no chat model: the retrieved neighbours vote, at $0).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

from ouroboros_gates.decider.excerpt import Excerpt
from ouroboros_gates.decider.features import SCHEMA_VERSION
from ouroboros_gates.schemas import InstrumentState, Scalar, State
from ouroboros_gates.schemas.errors import OuroError

__all__ = [
    "ANSWER_FORMAT",
    "ANSWER_SCHEMA",
    "BASELINE_INSTRUCTION",
    "PARSE_FAILED",
    "Answer",
    "AnswerError",
    "CandidateView",
    "Demo",
    "OperatingPoint",
    "Program",
    "ProgramError",
    "Shown",
    "parse_answer",
    "render_messages",
    "render_prefix",
    "render_signals",
]

VERDICTS = ("vulnerable", "not_vulnerable", "unsure")
SIGNATURE_FIELDS = (
    "in:code",
    "in:signals",
    "in:roles",
    "in:family",
    "out:verdict",
    "out:family",
    "out:confidence",
    "out:rationale",
    "out:cited_lines",
)

BASELINE_INSTRUCTION = (
    "You review one function from a code change for a security defect of the named family. Read the numbered "
    "code, the instrument signals (a signal is evidence, not a verdict; 'no coverage' is not 'no finding') "
    "and "
    "the inferred roles. Labelled examples of similar code follow; they show how such signals resolved "
    "elsewhere, not the answer. Decide whether attacker-controlled data reaches a dangerous operation "
    "without "
    "an adequate guard in this function."
)
ANSWER_FORMAT = (
    'Answer with one JSON object only: {"verdict": "vulnerable" | "not_vulnerable" | "unsure", "family": '
    '"<the family, or none>", "confidence": <0..1, the probability that your verdict is right>, "rationale": '
    '"<at most 3 sentences>", "cited_lines": [<line numbers of the code that the rationale relies on>]}. '
    "Cite at least one line number shown in the code."
)
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "family": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string"},
        "cited_lines": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["verdict", "confidence", "rationale", "cited_lines"],
}
_STATE_WORDS = {State.NONE: "no coverage", State.FAILED: "failed", State.NOT_APPLICABLE: "not applicable"}


class ProgramError(OuroError):
    """A program file that cannot be read, or one built for other features than the builder's."""


class AnswerError(ValueError):
    """A model answer that does not parse or cites no line in range (retried once, then ``parse_failed``)."""


@dataclass(frozen=True)
class OperatingPoint:
    """Thresholds on p for one family (or ``*``, pooled): BLOCK when offered, ADVISORY, DROP below."""

    advisory: float
    block: float | None = None
    block_offered: bool = False
    reason: str | None = (
        None  # why BLOCK is not offered: insufficient_data, precision_unreachable, calibration
    )

    def blocks(self, p: float) -> bool:
        """Whether p reaches an offered BLOCK threshold."""
        return self.block_offered and self.block is not None and p >= self.block


@dataclass(frozen=True)
class Demo:
    """A compiled demonstration: an example with its label and a rationale produced without the label."""

    example_id: str
    code: str
    signals: str
    roles: tuple[str, ...]
    family: str
    verdict: Literal["vulnerable", "not_vulnerable"]
    rationale: str
    cited_lines: tuple[int, ...]


@dataclass(frozen=True)
class Program:
    """A compiled program: instruction, demonstrations, retrieval and classify settings, operating points."""

    kind: Literal["llm-program", "memory-vote"]
    instruction: str = BASELINE_INSTRUCTION
    demos: tuple[Demo, ...] = ()
    profile: str = "static"
    schema_version: int = SCHEMA_VERSION  # the feature schema it was built for
    feature_set_digest: str | None = None  # None: built for any feature set (retrieval compares what it has)
    k: int = 1
    retrieval: Mapping[str, float] = field(default_factory=lambda: {"n1": 40, "k": 6, "lam": 0.5})
    operating_points: Mapping[str, OperatingPoint] = field(default_factory=dict)
    calibration: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # family -> Platt (a, b)
    priors: str = "off"
    source: str = "baseline"
    memory: str | None = None  # the digest of the packaged memory it was fitted on (None: any memory)

    def to_json(self) -> str:
        """The canonical JSON (sorted keys); its sha256 is the program id."""
        body = asdict(self)
        body["signature"] = {"fields": list(SIGNATURE_FIELDS), "answer_format": ANSWER_FORMAT}
        return json.dumps(body, sort_keys=True, separators=(",", ":"))

    @property
    def program_id(self) -> str:
        """sha256 of the canonical JSON."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str, where: str = "program") -> Program:
        """Read a program; an unknown field or a wrong signature names the file."""
        try:
            program = cls(**_typed(json.loads(text)))
        except (ValueError, TypeError, KeyError) as exc:
            raise ProgramError(f"{where}: not a program: {exc}") from exc
        if program.kind not in ("llm-program", "memory-vote") or program.k not in (1, 3, 5):
            raise ProgramError(
                f"{where}: kind {program.kind!r} with k={program.k} is not a program this engine runs"
            )
        return program

    @classmethod
    def load(cls, path: Path) -> Program:
        """A program from a file."""
        try:
            return cls.from_json(path.read_text(), str(path))
        except OSError as exc:
            raise ProgramError(f"{path}: {exc.strerror or exc}") from exc

    def point(self, family: str) -> OperatingPoint | None:
        """The family's operating point, else the pooled one, else None (insufficient data)."""
        return self.operating_points.get(family) or self.operating_points.get("*")

    def platt_map(self, family: str) -> tuple[float, float] | None:
        """The family's Platt map, else the pooled one, else None (uncalibrated)."""
        return self.calibration.get(family) or self.calibration.get("*")


def _typed(body: dict[str, Any]) -> dict[str, Any]:
    """A program's JSON body with its demonstrations, operating points and Platt maps as their types (the
    signature, fixed by this engine, left out)."""
    body.pop("signature", None)
    body["demos"] = tuple(
        Demo(**{**d, "roles": tuple(d["roles"]), "cited_lines": tuple(d["cited_lines"])})
        for d in body.get("demos", ())
    )
    body["operating_points"] = {f: OperatingPoint(**p) for f, p in body.get("operating_points", {}).items()}
    body["calibration"] = {f: (float(a), float(b)) for f, (a, b) in body.get("calibration", {}).items()}
    return body


def render_signals(x: Mapping[str, Scalar], instruments: Mapping[str, InstrumentState]) -> str:
    """``name: value`` lines for instruments that ran; one ``<instrument>: no coverage | failed | not
    applicable`` line for each that did not (missing is said in words, never shown as zero)."""
    lines = []
    for name in sorted({*instruments, *(n.split(".", 1)[0] for n in x)}):
        state = instruments[name].state if name in instruments else State.NONE
        if state is not State.RAN:
            lines.append(f"{name}: {_STATE_WORDS[state]}")
            continue
        lines += _feature_lines(x, name)
    return "\n".join(lines)


def _feature_lines(x: Mapping[str, Scalar], instrument: str) -> list[str]:
    """``name: value`` for each feature of an instrument that ran, sorted by name."""
    return [f"{n}: {_shown_value(x[n])}" for n in sorted(n for n in x if n.split(".", 1)[0] == instrument)]


def _shown_value(value: Scalar) -> str:
    """A feature's value as a prompt shows it: ``null``, ``true``/``false``, or as written."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class CandidateView:
    """What the prompt shows of a candidate: excerpt, signals (validated record), roles, family, changes."""

    excerpt: Excerpt
    signals: str
    roles: tuple[str, ...]
    family: str
    changed_lines: tuple[int, ...] = ()
    signal_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class Shown:
    """A retrieved example as a prompt shows it: code, signals, roles, family, label (never a rationale)."""

    example_id: str
    code: str
    signals: str
    roles: tuple[str, ...]
    family: str
    y: int


def _block(title: str, code: str, signals: str, roles: Sequence[str], family: str) -> list[str]:
    return [
        title,
        f"family: {family}",
        "code:",
        code,
        "signals:",
        signals or "(none)",
        "roles:",
        "\n".join(roles) if roles else "(none inferred)",
    ]


def render_prefix(program: Program) -> str:
    """Instruction + answer contract + demonstrations: identical for every candidate (provider prefix
    cache)."""
    parts = [program.instruction.strip()]
    if "json" not in program.instruction.lower():
        parts.append(ANSWER_FORMAT)
    for i, demo in enumerate(program.demos, 1):
        parts += _block(f"### Demonstration {i}", demo.code, demo.signals, demo.roles, demo.family)
        answer = {
            "verdict": demo.verdict,
            "family": demo.family,
            "rationale": demo.rationale,
            "cited_lines": list(demo.cited_lines),
        }
        parts.append("answer: " + json.dumps(answer, sort_keys=True))
    return "\n".join(parts)


def render_messages(program: Program, view: CandidateView, examples: Sequence[Shown]) -> list[dict[str, str]]:
    """System: the shared prefix. User: the retrieved examples, then the candidate."""
    parts = _labelled(examples)
    parts += _block("### Candidate", view.excerpt.text, view.signals, view.roles, view.family)
    if view.changed_lines:
        parts.append("changed lines: " + ", ".join(str(n) for n in view.changed_lines))
    parts.append("Answer in JSON.")
    return [
        {"role": "system", "content": render_prefix(program)},
        {"role": "user", "content": "\n".join(parts)},
    ]


def _labelled(examples: Sequence[Shown]) -> list[str]:
    """The retrieved examples' blocks, each with its label."""
    parts: list[str] = []
    for i, ex in enumerate(examples, 1):
        label = "vulnerable" if ex.y else "not_vulnerable"
        parts += [
            *_block(f"### Labelled example {i}", ex.code, ex.signals, ex.roles, ex.family),
            f"label: {label}",
        ]
    return parts


@dataclass(frozen=True)
class Answer:
    """One parsed answer (or the ``unsure, parse_failed`` stand-in)."""

    verdict: Literal["vulnerable", "not_vulnerable", "unsure"]
    family: str
    confidence: float
    rationale: str
    cited_lines: tuple[int, ...]
    parse_failed: bool = False

    @property
    def p(self) -> float:
        """This sample's vote: confidence for vulnerable, 1 - confidence for not_vulnerable, 0.5 unsure."""
        if self.verdict == "vulnerable":
            return self.confidence
        if self.verdict == "not_vulnerable":
            return 1.0 - self.confidence
        return 0.5


PARSE_FAILED = Answer("unsure", "none", 0.0, "", (), parse_failed=True)
_LINE = re.compile(r"\b(?:lines?|L)\s*(\d+)(?:\s*(?:-|\u2013|to|and|,)\s*(\d+))?", re.IGNORECASE)


def parse_answer(reply: str | Mapping[str, Any], excerpt: Excerpt) -> Answer:
    """The answer of one reply; raises AnswerError when it does not parse or cites no line in range."""
    data = _reply_object(reply)
    verdict, confidence, rationale = _judgement(data)
    lines = _cited(data.get("cited_lines") or [], rationale, excerpt)
    family = data.get("family")
    return Answer(
        verdict,
        family if isinstance(family, str) and family else "none",
        confidence,
        " ".join(rationale.split()),
        lines,
    )


def _reply_object(reply: str | Mapping[str, Any]) -> dict[str, Any]:
    try:
        data = json.loads(reply) if isinstance(reply, str) else dict(reply)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"not JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise AnswerError("not a JSON object")
    return data


def _judgement(data: Mapping[str, Any]) -> tuple[Any, float, str]:
    """The verdict, the confidence (a number in [0, 1]) and the rationale (not blank) of a reply."""
    verdict, confidence, rationale = data.get("verdict"), data.get("confidence"), data.get("rationale")
    if verdict not in VERDICTS:
        raise AnswerError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    if not _is_probability(confidence):
        raise AnswerError(f"confidence {confidence!r} is not a number in [0, 1]")
    if not isinstance(rationale, str) or not rationale.strip():
        raise AnswerError("no rationale")
    return verdict, float(confidence), rationale


def _is_probability(value: object) -> TypeGuard[float]:
    """Whether a value is a number (not a bool) in [0, 1]."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _cited(cited: object, rationale: str, excerpt: Excerpt) -> tuple[int, ...]:
    """The lines an answer cites, in ``cited_lines`` or named in its rationale, that the excerpt shows."""
    lines = tuple(sorted({n for n in [*_line_numbers(cited), *_named_lines(rationale)] if excerpt.covers(n)}))
    if not lines:
        raise AnswerError(f"cites no line of the code shown ({excerpt.first_line}-{excerpt.last_line})")
    return lines


def _line_numbers(cited: object) -> list[int]:
    """``cited_lines`` as the list of line numbers it must be; refused when it is not one."""
    if not isinstance(cited, list) or not all(_is_line_number(n) for n in cited):
        raise AnswerError("cited_lines is not a list of line numbers")
    return cited


def _named_lines(rationale: str) -> list[int]:
    """The line numbers a rationale names (``line 12``, ``lines 3-5``, ``L7``)."""
    return [int(n) for m in _LINE.finditer(rationale) for n in m.groups() if n]


def _is_line_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
