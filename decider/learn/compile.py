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
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided
from ouroboros_gates.decider.features import feature_set_digest
from ouroboros_gates.decider.learn.demos import (
    Candidate,
    alternates,
    demonstrates,
    demonstration,
    draw_sets,
    identity_free,
)
from ouroboros_gates.decider.learn.errors import LearnError, Unfinished
from ouroboros_gates.decider.learn.folds import FoldPlan, plan_folds, seeded_order
from ouroboros_gates.decider.learn.labels import LabelledUnit, LabelSet
from ouroboros_gates.decider.learn.metrics import balanced_brier
from ouroboros_gates.decider.learn.programs import decide_units
from ouroboros_gates.decider.learn.proposals import Answered, instructions, propose
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import Demo, Program, render_prefix
from ouroboros_gates.llm import BudgetExhausted, Chat, ChatRequest, LlmError

__all__ = ["CompileSpec", "compile_program", "identity_free", "load_spec"]


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
        _check_setting(path, key, value, defaults)
    return replace(CompileSpec(**data), sha256=hashlib.sha256(raw).hexdigest())


def _check_setting(path: Path, key: str, value: Any, defaults: CompileSpec) -> None:
    """A key of ``[compile]`` must be a setting, its value of the default's type (an int may stand for a
    float)."""
    if key not in CompileSpec.__dataclass_fields__ or key == "sha256":
        raise LearnError(f"{path}: compile.{key}: not a compile setting")
    default = getattr(defaults, key)
    if not _of_type(value, default):
        raise LearnError(f"{path}: compile.{key}: expected {type(default).__name__}")


def _of_type(value: Any, default: Any) -> bool:
    """Whether a value has the default's type (an int may stand for a float)."""
    return type(value) is type(default) or (isinstance(value, int) and isinstance(default, float))


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


def _score(decided: Mapping[str, Decided], units: Sequence[LabelledUnit]) -> float:
    """The balanced Brier score of the units decided (an unscored answer counts 0.5; none decided: 0.25)."""
    rows = [_brier_row(u, decided[u.uid]) for u in units if u.uid in decided]
    score = balanced_brier(rows)
    return 0.25 if score is None else score


def _brier_row(unit: LabelledUnit, d: Decided) -> tuple[str, str, int, float]:
    """A unit's family, group, label and raw score (0.5 when there is none)."""
    return (unit.family, unit.group, unit.y, 0.5 if d.raw_score is None else d.raw_score)


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
    return (
        _seeded(_within(with_record, plan.compile_boot), spec.seed, "boot")[: spec.bootstrap_max],
        _seeded(_within(with_record, plan.compile_val), spec.seed, "val")[: spec.val_max],
    )


def _within(units: Sequence[LabelledUnit], groups: frozenset[str]) -> list[LabelledUnit]:
    """The units of these groups, in order."""
    return [u for u in units if u.group in groups]


def _seeded(units: Sequence[LabelledUnit], seed: int, salt: str) -> list[LabelledUnit]:
    """The units in the seeded order of their ids."""
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
    pool: list[Candidate]
    sets: list[list[Candidate]]
    demo_sets: Sequence[tuple[Demo, ...]]
    val_units: int
    configurations: list[dict[str, Any]]
    chosen: dict[str, Any]
    program: Program


def _compile(spec: CompileSpec, boot_units: Sequence[LabelledUnit], trials: _Trials) -> _Outcome:
    """Bootstrap, draw the demonstration sets, propose instructions and score them (steps 2-4)."""
    bootstrap = _bootstrap(boot_units, trials)
    pool = _pool(bootstrap, spec.min_confidence)
    sets = draw_sets(pool, spec.seed, spec.demo_sets, spec.demo_size)
    proposals = propose(trials.client, bootstrap, spec.proposals)
    trials = replace(trials, demo_sets=[tuple(d for _, d in chosen) for chosen in sets] or [()])
    configurations = [trials.score(source, text, 0) for source, text in instructions(proposals)]
    configurations += _other_sets(trials, _best(configurations, spec.tie))
    chosen = _best(configurations, spec.tie)
    program = trials.program(chosen["instruction_source"], chosen["instruction"], chosen["demo_set"] - 1)
    return _Outcome(
        len(boot_units), pool, sets, trials.demo_sets, len(trials.units), configurations, chosen, program
    )


def _pool(bootstrap: Sequence[Answered], min_confidence: float) -> list[Candidate]:
    """The bootstrap answers that may teach, as demonstrations."""
    return [(u, demonstration(u, a, d)) for u, d, a in bootstrap if demonstrates(u, d, min_confidence)]


def _other_sets(trials: _Trials, best: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The best instruction scored with each demonstration set after the first."""
    return [
        trials.score(best["instruction_source"], best["instruction"], set_index)
        for set_index in range(1, len(trials.demo_sets))
    ]


def _bootstrap(boot_units: Sequence[LabelledUnit], trials: _Trials) -> list[Answered]:
    """The program without demonstrations on the ``C_boot`` candidates: each answer with its record."""
    got = decide_units(trials.base, boot_units, trials.analysed, trials.memory, client=trials.client)
    _check(got)
    answered = [(u, got[u.uid], trials.analysed[u.uid]) for u in boot_units if u.uid in got]
    return [(u, d, a) for u, d, a in answered if a is not None]


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
            "alternates": alternates(outcome.sets, outcome.pool),
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
    """The SHA-256 of the items, one a line."""
    return hashlib.sha256("\n".join(items).encode()).hexdigest()
