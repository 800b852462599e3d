"""Compile a language-model program, DSPy-style and in-house (docs/decider.md, "Compile"), from a committed
spec.

1. The compile split ``C`` (seeded, stratified by family, disjoint from every evaluation fold) is cut into
   ``C_boot`` (demonstration source) and ``C_val`` (scoring); memory while compiling is ``C_boot`` only.
2. Bootstrap few-shot: the program without demonstrations on up to ``bootstrap_max`` ``C_boot`` candidates;
   an answer is kept when it is right, confident (≥ ``min_confidence``), cites a line shown and names no
   identity (repository, path, advisory id). Four demonstration sets of three (one positive, one negative,
   one of either) are drawn, seeded, with an alternate of another framework per demonstration.
3. Instruction search: one proposal call asks for six instructions; with the baseline that is seven; a
   proposal that drops the answer contract gets it appended.
4. Scoring on ``C_val``: the seven instructions with demo set 1, then the best with sets 2-4; the metric is
   the balanced Brier score of the raw score, ties within ``tie`` to fewer prompt tokens.

A ceiling hit ends the compile ``Unfinished`` with no artifact. The artifact is canonical JSON with no
time or spend in it, so re-running from the response cache reproduces it byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided
from ouroboros_gates.decider.features import feature_set_digest
from ouroboros_gates.decider.learn.errors import LearnError, Unfinished
from ouroboros_gates.decider.learn.folds import FoldPlan, plan_folds, seeded_order
from ouroboros_gates.decider.learn.groups import ADVISORY
from ouroboros_gates.decider.learn.labels import LabelledUnit, LabelSet
from ouroboros_gates.decider.learn.metrics import balanced_brier
from ouroboros_gates.decider.learn.programs import decide_units
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import (
    ANSWER_FORMAT,
    BASELINE_INSTRUCTION,
    Demo,
    Program,
    render_prefix,
    render_signals,
)
from ouroboros_gates.llm import BudgetExhausted, Chat, ChatRequest, LlmError

__all__ = ["CompileSpec", "compile_program", "identity_free", "load_spec"]

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"instructions": {"type": "array", "items": {"type": "string"}}},
    "required": ["instructions"],
}


@dataclass(frozen=True)
class CompileSpec:
    """``compile.toml``: every choice of a compile, committed before it runs."""

    seed: int = 0
    compile_share: float = 0.25
    boot_share: float = 0.6
    bootstrap_max: int = 150
    min_confidence: float = 0.7
    demo_sets: int = 4
    demo_size: int = 3
    proposals: int = 6
    val_max: int = 60
    tie: float = 0.005
    usd_ceiling: float = 3.0
    call_ceiling: int = 2000
    k: int = 1
    sha256: str = ""


def load_spec(path: Path) -> CompileSpec:
    """Read ``[compile]`` of a spec; unknown keys and wrong types name the file and the key."""
    try:
        raw = path.read_bytes()
        doc = tomllib.loads(raw.decode())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LearnError(f"{path}: {exc}") from exc
    data = doc.get("compile")
    if not isinstance(data, dict):
        raise LearnError(f"{path}: [compile]: missing")
    defaults = CompileSpec()
    for key, value in data.items():
        if key not in CompileSpec.__dataclass_fields__ or key == "sha256":
            raise LearnError(f"{path}: compile.{key}: not a compile setting")
        if type(value) is not type(getattr(defaults, key)) and not (
            isinstance(value, int) and isinstance(getattr(defaults, key), float)
        ):
            raise LearnError(f"{path}: compile.{key}: expected {type(getattr(defaults, key)).__name__}")
    return replace(CompileSpec(**data), sha256=hashlib.sha256(raw).hexdigest())


def identity_free(text: str, unit: LabelledUnit) -> bool:
    """Whether a rationale names no repository, owner, path or advisory id of its unit."""
    lowered = text.lower()
    names = [unit.repo, *unit.repo.split("/"), unit.source_ref, "module."]
    if any(n and len(n) >= 4 and n.lower() in lowered for n in names):
        return False
    return ADVISORY.search(text) is None


class _Recording:
    """A chat client wrapper that remembers what was asked (the response-cache digest)."""

    def __init__(self, inner: Chat) -> None:
        self.inner = inner
        self.asked: set[str] = set()

    def chat(self, request: ChatRequest) -> Any:
        body = json.dumps(
            [list(request.messages), request.temperature, request.sample, request.attempt], sort_keys=True
        )
        self.asked.add(hashlib.sha256(body.encode()).hexdigest())
        return self.inner.chat(request)

    @property
    def digest(self) -> str:
        return hashlib.sha256("\n".join(sorted(self.asked)).encode()).hexdigest()


def _check(decided: Mapping[str, Decided]) -> None:
    for d in decided.values():
        if d.fallback and "budget" in d.fallback:
            raise Unfinished("compile unfinished: the budget ceiling was reached; no artifact")


def _demo(unit: LabelledUnit, item: Analysed, d: Decided) -> Demo:
    verdict: Literal["vulnerable", "not_vulnerable"] = "vulnerable" if unit.y else "not_vulnerable"
    signals = render_signals(item.record.x, item.record.instruments)
    return Demo(
        example_id=unit.uid,
        code=d.excerpt.text,
        signals=signals,
        roles=tuple(item.roles),
        family=unit.family,
        verdict=verdict,
        rationale=d.decision.rationale,
        cited_lines=tuple(d.decision.cited_lines),
    )


def _confidence(d: Decided) -> float:
    s = d.raw_score or 0.5
    return s if d.decision.verdict == "vulnerable" else 1 - s


def _draw_sets(
    pool: Sequence[tuple[LabelledUnit, Demo]], spec: CompileSpec
) -> list[list[tuple[LabelledUnit, Demo]]]:
    order = seeded_order([u.uid for u, _ in pool], spec.seed, "demos")
    ordered = [pool_item for uid in order for pool_item in pool if pool_item[0].uid == uid]
    sets: list[list[tuple[LabelledUnit, Demo]]] = []
    used: set[str] = set()
    for _ in range(spec.demo_sets):
        chosen = _next_set(ordered, used, spec.demo_size)
        if chosen is None:
            break
        used |= {u.uid for u, _ in chosen}
        sets.append(chosen)
    return sets


def _next_set(
    ordered: Sequence[tuple[LabelledUnit, Demo]], used: set[str], size: int
) -> list[tuple[LabelledUnit, Demo]] | None:
    """One positive, one negative and ``size - 2`` of either, none used before; None when a kind runs out."""
    unused = [p for p in ordered if p[0].uid not in used]
    pos, neg = _first_of(unused, 1), _first_of(unused, 0)
    if pos is None or neg is None:
        return None
    chosen = [pos, neg]
    return chosen + [p for p in unused if p not in chosen][: size - 2]


def _first_of(ordered: Sequence[tuple[LabelledUnit, Demo]], y: int) -> tuple[LabelledUnit, Demo] | None:
    return next((p for p in ordered if p[0].y == y), None)


def _alternates(
    sets: Sequence[Sequence[tuple[LabelledUnit, Demo]]],
    pool: Sequence[tuple[LabelledUnit, Demo]],
) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for chosen in sets:
        for unit, _ in chosen:
            other = next(
                (
                    u.uid
                    for u, _ in pool
                    if u.y == unit.y and u.uid != unit.uid and not set(u.frameworks) & set(unit.frameworks)
                ),
                None,
            )
            out[unit.uid] = other
    return out


def _brief(a: Analysed) -> str:
    return "; ".join(render_signals(a.record.x, a.record.instruments).splitlines()[:6])


def _propose(client: Chat, bootstrap: Sequence[tuple[LabelledUnit, Decided, Analysed]], n: int) -> list[str]:
    errors = [
        f"- family {u.family}; signals: {_brief(a)}"
        f"; answered {d.decision.verdict}, label {'vulnerable' if u.y else 'not_vulnerable'}"
        for u, d, a in bootstrap
        if (d.decision.verdict == "vulnerable") != bool(u.y)
    ][:20]
    prompt = "\n".join(
        [
            "Propose instructions for a program that reviews one function for a security defect.",
            "Signature: code, signals, roles, family -> verdict, family, confidence, rationale, cited_lines.",
            "Signals are instrument observations (qr.* quick rules, bandit.* Bandit, facts.* call graph, "
            "roles.* "
            "inferred roles, delta.* the change); 'no coverage' is not 'no finding'.",
            "Answers that were wrong:",
            *(errors or ["- none"]),
            f'Propose {n} different instructions. Answer in JSON: {{"instructions": [..]}}.',
        ]
    )
    request = ChatRequest(messages=({"role": "user", "content": prompt},), schema=PROPOSAL_SCHEMA)
    reply = client.chat(request)
    return [_with_contract(p) for p in _proposals(reply.data)[:n]]


def _proposals(data: Any) -> list[str]:
    """The non-blank instructions of a proposal reply, whitespace collapsed."""
    found = data.get("instructions", []) if isinstance(data, dict) else []
    return [" ".join(str(t).split()) for t in found if isinstance(t, str) and t.strip()]


def _with_contract(instruction: str) -> str:
    """An instruction that drops the answer contract gets it appended."""
    if re.search(r"\bjson\b", instruction, re.IGNORECASE):
        return instruction
    return f"{instruction}\n{ANSWER_FORMAT}"


def _score(decided: Mapping[str, Decided], units: Sequence[LabelledUnit]) -> float:
    rows: list[tuple[str, str, int, float]] = []
    for u in units:
        if u.uid in decided:
            raw = decided[u.uid].raw_score
            rows.append((u.family, u.group, u.y, 0.5 if raw is None else raw))
    score = balanced_brier(rows)
    return 0.25 if score is None else score


def compile_program(
    spec: CompileSpec,
    labels: LabelSet,
    analysed: Mapping[str, Analysed | None],
    memory: Memory,
    client: Chat,
    *,
    profile: str = "static",
) -> dict[str, Any]:
    """The compiled artifact (a JSON-ready dict); ``Unfinished`` when a ceiling is reached."""
    plan = plan_folds(labels.units, spec.seed, compile_share=spec.compile_share, boot_share=spec.boot_share)
    recorder = _Recording(client)
    boot_memory = Memory(e for e in memory.examples if e.group in plan.compile_boot)
    boot_units, val_units = _compile_units(labels, analysed, plan, spec)
    base = Program(kind="llm-program", k=spec.k, feature_set_digest=feature_set_digest(), profile=profile)
    validation = _Trials(base, val_units, analysed, boot_memory, recorder, plan.compile_val)
    try:
        outcome = _compile(spec, boot_units, validation)
    except BudgetExhausted as exc:
        raise Unfinished(f"compile unfinished: {exc}; no artifact") from exc
    except LlmError as exc:
        raise LearnError(f"compile failed: {exc}") from exc
    return _artifact(spec, labels, memory, plan, outcome, recorder.digest)


def _compile_units(
    labels: LabelSet, analysed: Mapping[str, Analysed | None], plan: FoldPlan, spec: CompileSpec
) -> tuple[list[LabelledUnit], list[LabelledUnit]]:
    """The bootstrap candidates of ``C_boot`` and the scoring units of ``C_val``, seeded and capped."""
    with_record = [u for u in labels.units if analysed.get(u.uid) is not None]
    boot = [u for u in with_record if u.group in plan.compile_boot]
    val = [u for u in with_record if u.group in plan.compile_val]
    return (
        _seeded(boot, spec.seed, "boot")[: spec.bootstrap_max],
        _seeded(val, spec.seed, "val")[: spec.val_max],
    )


def _seeded(units: Sequence[LabelledUnit], seed: int, salt: str) -> list[LabelledUnit]:
    return [u for uid in seeded_order([u.uid for u in units], seed, salt) for u in units if u.uid == uid]


@dataclass(frozen=True)
class _Trials:
    """Scores configurations of one base program on ``C_val`` with one of its demonstration sets."""

    base: Program
    units: Sequence[LabelledUnit]
    analysed: Mapping[str, Analysed | None]
    memory: Memory
    client: Chat
    groups: frozenset[str]
    demo_sets: Sequence[tuple[Demo, ...]] = ((),)

    def program(self, source: str, instruction: str, set_index: int) -> Program:
        return replace(self.base, instruction=instruction, demos=self.demo_sets[set_index], source=source)

    def score(self, source: str, instruction: str, set_index: int) -> dict[str, Any]:
        """One configuration row of the artifact."""
        program = self.program(source, instruction, set_index)
        decided = decide_units(
            program, self.units, self.analysed, self.memory, client=self.client, evaluation_groups=self.groups
        )
        _check(decided)
        return {
            "instruction_source": source,
            "demo_set": set_index + 1,
            "score": round(_score(decided, self.units), 6),
            "prompt_tokens": len(render_prefix(program)) // 4,
            "instruction": instruction,
        }


@dataclass(frozen=True)
class _Outcome:
    """What a compile found: the bootstrap pool, the demonstration sets drawn from it, every score."""

    asked: int
    pool: list[tuple[LabelledUnit, Demo]]
    sets: list[list[tuple[LabelledUnit, Demo]]]
    demo_sets: Sequence[tuple[Demo, ...]]
    val_units: int
    configurations: list[dict[str, Any]]
    chosen: dict[str, Any]
    program: Program


def _compile(spec: CompileSpec, boot_units: Sequence[LabelledUnit], trials: _Trials) -> _Outcome:
    """Bootstrap, draw the demonstration sets, propose instructions and score them (steps 2-4)."""
    bootstrap = _bootstrap(boot_units, trials)
    pool = [(u, _demo(u, a, d)) for u, d, a in bootstrap if _demonstrates(u, d, spec)]
    sets = _draw_sets(pool, spec)
    proposals = _propose(trials.client, bootstrap, spec.proposals)
    trials = replace(trials, demo_sets=[tuple(d for _, d in chosen) for chosen in sets] or [()])
    configurations = [trials.score(source, text, 0) for source, text in _instructions(proposals)]
    best = _best(configurations, spec.tie)
    for set_index in range(1, len(trials.demo_sets)):
        configurations.append(trials.score(best["instruction_source"], best["instruction"], set_index))
    chosen = _best(configurations, spec.tie)
    program = trials.program(chosen["instruction_source"], chosen["instruction"], chosen["demo_set"] - 1)
    return _Outcome(
        len(boot_units), pool, sets, trials.demo_sets, len(trials.units), configurations, chosen, program
    )


def _bootstrap(
    boot_units: Sequence[LabelledUnit], trials: _Trials
) -> list[tuple[LabelledUnit, Decided, Analysed]]:
    """The program without demonstrations on the ``C_boot`` candidates: each answer with its record."""
    got = decide_units(trials.base, boot_units, trials.analysed, trials.memory, client=trials.client)
    _check(got)
    answered = [(u, got[u.uid], trials.analysed[u.uid]) for u in boot_units if u.uid in got]
    return [(u, d, a) for u, d, a in answered if a is not None]


def _demonstrates(unit: LabelledUnit, d: Decided, spec: CompileSpec) -> bool:
    """Whether a bootstrap answer may be a demonstration: right, confident, citing and naming no identity."""
    verdict = d.decision.verdict
    return (
        (verdict == "vulnerable") == bool(unit.y)
        and verdict != "unsure"
        and _confidence(d) >= spec.min_confidence
        and bool(d.decision.cited_lines)
        and identity_free(d.decision.rationale, unit)
    )


def _instructions(proposals: Sequence[str]) -> list[tuple[str, str]]:
    """The baseline and each proposal, with the source each configuration row names."""
    return [("baseline", BASELINE_INSTRUCTION), *((f"proposed:{i + 1}", p) for i, p in enumerate(proposals))]


def _artifact(
    spec: CompileSpec, labels: LabelSet, memory: Memory, plan: FoldPlan, outcome: _Outcome, cache_digest: str
) -> dict[str, Any]:
    """The artifact: the chosen program, how it was chosen, and the digests of what it was chosen from."""
    program, chosen = outcome.program, outcome.chosen
    return {
        "kind": "compiled-program",
        "schema_version": 1,
        "profile": program.profile,
        "seed": spec.seed,
        "program_id": program.program_id,
        "program": json.loads(program.to_json()),
        "compile": {
            "spec_sha256": spec.sha256,
            "metric": "balanced_brier_v1",
            "configurations": outcome.configurations,
            "chosen": {k: chosen[k] for k in ("instruction_source", "demo_set", "score")},
            "bootstrap": {
                "asked": outcome.asked,
                "kept": len(outcome.pool),
                "demo_sets": [[d.example_id for d in s] for s in outcome.demo_sets],
            },
            "alternates": _alternates(outcome.sets, outcome.pool),
            "val_units": outcome.val_units,
            "response_cache_digest": cache_digest,
        },
        "data": {
            "label_set_digest": labels.digest,
            "memory_snapshot_digest": memory.digest,
            "compile_groups_digest": _digest(sorted(plan.compile_boot | plan.compile_val)),
            "folds_digest": plan.digest,
            "sources": list(labels.sources),
        },
    }


def _best(configurations: Sequence[dict[str, Any]], tie: float) -> dict[str, Any]:
    """The lowest balanced Brier; within ``tie`` of it, the fewest prompt tokens (then the earliest)."""
    low = min(c["score"] for c in configurations)
    near = [c for c in configurations if c["score"] <= low + tie]
    return min(near, key=lambda c: c["prompt_tokens"])


def _digest(items: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(items).encode()).hexdigest()
