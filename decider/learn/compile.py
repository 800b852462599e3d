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
from ouroboros_gates.decider.learn.folds import plan_folds, seeded_order
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
    ordered = [
        pool_item
        for uid in seeded_order([u.uid for u, _ in pool], spec.seed, "demos")
        for pool_item in pool
        if pool_item[0].uid == uid
    ]
    sets: list[list[tuple[LabelledUnit, Demo]]] = []
    used: set[str] = set()
    for _ in range(spec.demo_sets):
        pos = next((p for p in ordered if p[0].y == 1 and p[0].uid not in used), None)
        neg = next((p for p in ordered if p[0].y == 0 and p[0].uid not in used), None)
        if pos is None or neg is None:
            break
        chosen = [pos, neg]
        chosen += [p for p in ordered if p[0].uid not in used and p not in chosen][: spec.demo_size - 2]
        used |= {u.uid for u, _ in chosen}
        sets.append(chosen)
    return sets


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


def _propose(client: Chat, bootstrap: Sequence[tuple[LabelledUnit, Decided, Analysed]], n: int) -> list[str]:
    def brief(a: Analysed) -> str:
        return "; ".join(render_signals(a.record.x, a.record.instruments).splitlines()[:6])

    errors = [
        f"- family {u.family}; signals: {brief(a)}"
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
    found = reply.data.get("instructions", []) if isinstance(reply.data, dict) else []
    proposals = [" ".join(str(t).split()) for t in found if isinstance(t, str) and t.strip()][:n]
    return [p if re.search(r"\bjson\b", p, re.IGNORECASE) else f"{p}\n{ANSWER_FORMAT}" for p in proposals]


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
    boot_groups, val_groups = plan.compile_boot, plan.compile_val
    recorder = _Recording(client)
    boot_memory = Memory(e for e in memory.examples if e.group in boot_groups)
    with_record = [u for u in labels.units if analysed.get(u.uid) is not None]
    boot_units = [u for u in with_record if u.group in boot_groups]
    boot_units = [
        u
        for uid in seeded_order([u.uid for u in boot_units], spec.seed, "boot")
        for u in boot_units
        if u.uid == uid
    ][: spec.bootstrap_max]
    val_units = [u for u in with_record if u.group in val_groups]
    val_units = [
        u
        for uid in seeded_order([u.uid for u in val_units], spec.seed, "val")
        for u in val_units
        if u.uid == uid
    ][: spec.val_max]
    base = Program(kind="llm-program", k=spec.k, feature_set_digest=feature_set_digest(), profile=profile)
    try:
        got = decide_units(base, boot_units, analysed, boot_memory, client=recorder)
        _check(got)
        bootstrap = [(u, got[u.uid], analysed[u.uid]) for u in boot_units if u.uid in got]
        pool = [
            (u, _demo(u, a, d))
            for u, d, a in bootstrap
            if a is not None
            and (d.decision.verdict == "vulnerable") == bool(u.y)
            and d.decision.verdict != "unsure"
            and _confidence(d) >= spec.min_confidence
            and d.decision.cited_lines
            and identity_free(d.decision.rationale, u)
        ]
        sets = _draw_sets(pool, spec)
        proposals = _propose(recorder, [(u, d, a) for u, d, a in bootstrap if a is not None], spec.proposals)
        instructions = [
            ("baseline", BASELINE_INSTRUCTION),
            *((f"proposed:{i + 1}", p) for i, p in enumerate(proposals)),
        ]
        demo_sets = [tuple(d for _, d in chosen) for chosen in sets] or [()]
        configurations: list[dict[str, Any]] = []

        def trial(source: str, instruction: str, set_index: int) -> None:
            program = replace(base, instruction=instruction, demos=demo_sets[set_index], source=source)
            decided = decide_units(
                program, val_units, analysed, boot_memory, client=recorder, evaluation_groups=val_groups
            )
            _check(decided)
            configurations.append(
                {
                    "instruction_source": source,
                    "demo_set": set_index + 1,
                    "score": round(_score(decided, val_units), 6),
                    "prompt_tokens": len(render_prefix(program)) // 4,
                    "instruction": instruction,
                }
            )

        for source, instruction in instructions:
            trial(source, instruction, 0)
        best = _best(configurations, spec.tie)
        for set_index in range(1, len(demo_sets)):
            trial(best["instruction_source"], best["instruction"], set_index)
    except BudgetExhausted as exc:
        raise Unfinished(f"compile unfinished: {exc}; no artifact") from exc
    except LlmError as exc:
        raise LearnError(f"compile failed: {exc}") from exc
    chosen = _best(configurations, spec.tie)
    program = replace(
        base,
        instruction=chosen["instruction"],
        demos=demo_sets[chosen["demo_set"] - 1],
        source=chosen["instruction_source"],
    )
    return {
        "kind": "compiled-program",
        "schema_version": 1,
        "profile": profile,
        "seed": spec.seed,
        "program_id": program.program_id,
        "program": json.loads(program.to_json()),
        "compile": {
            "spec_sha256": spec.sha256,
            "metric": "balanced_brier_v1",
            "configurations": configurations,
            "chosen": {k: chosen[k] for k in ("instruction_source", "demo_set", "score")},
            "bootstrap": {
                "asked": len(boot_units),
                "kept": len(pool),
                "demo_sets": [[d.example_id for d in s] for s in demo_sets],
            },
            "alternates": _alternates(sets, pool),
            "val_units": len(val_units),
            "response_cache_digest": recorder.digest,
        },
        "data": {
            "label_set_digest": labels.digest,
            "memory_snapshot_digest": memory.digest,
            "compile_groups_digest": _digest(sorted(boot_groups | val_groups)),
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
