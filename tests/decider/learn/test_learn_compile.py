"""Compile against the scripted model server: bootstrap, instruction search, balanced Brier, the ceiling,
and the artifact reproduced byte for byte from the response cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _learn_fixtures import small_corpus, unit

from ouroboros_gates.decider.learn.artifacts import ProgramShelf, canonical
from ouroboros_gates.decider.learn.compile import (
    CompileSpec,
    _best,
    compile_program,
    identity_free,
    load_spec,
)
from ouroboros_gates.decider.learn.errors import LearnError, Unfinished
from ouroboros_gates.decider.learn.folds import plan_folds
from ouroboros_gates.decider.learn.labels import build_labels
from ouroboros_gates.decider.learn.materialise import analyse_units
from ouroboros_gates.decider.learn.programs import build_memory
from ouroboros_gates.decider.program import ANSWER_FORMAT
from ouroboros_gates.llm import ChatClient, Endpoint, MeteredClient, Prices, ResponseCache, load_manifest

ANSWER = {
    "verdict": "vulnerable",
    "family": "sql_injection",
    "confidence": 0.9,
    "rationale": "Line 2 builds the statement from the caller's value.",
    "cited_lines": [2],
}
PROPOSALS = {
    "instructions": [f"Instruction {i}: decide whether input reaches the sink." for i in range(5)]
    + ["Read the code and answer in JSON with verdict, confidence, rationale, cited_lines."]
}
SPEC = CompileSpec(seed=3, compile_share=0.4, bootstrap_max=12, val_max=8)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("corpus")
    allow = small_corpus(tmp)
    labels = build_labels([tmp / "pairs"], allow)
    analysed = analyse_units(labels.units, tmp / "work")
    memory, _ = build_memory(labels.units, analysed, labels.digest)
    return {"labels": labels, "analysed": analysed, "memory": memory}


def _client(server: Any, cache: Path, usd: float = 5.0) -> MeteredClient:
    endpoint = Endpoint(api="openai", base_url=f"{server.url}/v1", model="fake-model")
    priced = replace(
        load_manifest("local"), prices=Prices(input=0.28, cache_read=0.028, cache_write=0.28, output=0.42)
    )
    return MeteredClient(
        ChatClient(endpoint), priced, usd_ceiling=usd, call_ceiling=5000, cache=ResponseCache(cache)
    )


def test_compile_and_reproducible_from_cache(
    corpus: dict[str, Any], model_server: Any, tmp_path: Path
) -> None:
    model_server.script([{"contains": "Propose", "content": PROPOSALS}, {"content": ANSWER}])
    first_client = _client(model_server, tmp_path / "responses")
    artifact = compile_program(SPEC, corpus["labels"], corpus["analysed"], corpus["memory"], first_client)
    assert first_client.calls > 0 and first_client.spent_usd > 0
    configs = artifact["compile"]["configurations"]
    assert [c["instruction_source"] for c in configs[:7]] == [
        "baseline",
        *(f"proposed:{i}" for i in range(1, 7)),
    ]
    assert all(c["demo_set"] == 1 for c in configs[:7])
    assert len(configs) == 7 + len(artifact["compile"]["bootstrap"]["demo_sets"]) - 1
    dropped = next(c for c in configs if c["instruction"].startswith("Instruction 0"))
    assert dropped["instruction"].endswith(ANSWER_FORMAT)  # the answer contract appended
    kept = next(c for c in configs if c["instruction"].startswith("Read the code"))
    assert ANSWER_FORMAT not in kept["instruction"]
    plan = plan_folds(corpus["labels"].units, SPEC.seed, compile_share=SPEC.compile_share)
    for fold in plan.outer:
        assert not fold.eval_groups & (plan.compile_boot | plan.compile_val)
    # the same compile again, every answer from the cache, with the server gone: byte for byte, $0
    model_server.stop()
    replay_client = _client(model_server, tmp_path / "responses")
    again = compile_program(SPEC, corpus["labels"], corpus["analysed"], corpus["memory"], replay_client)
    assert canonical(again) == canonical(artifact)
    assert replay_client.spent_usd == 0 and replay_client.calls == 0 and replay_client.cache_hits > 0
    shelf = ProgramShelf(tmp_path / "programs")
    sha = shelf.put(artifact, {"usd": first_client.spent_usd, "replayed": False})
    assert shelf.put(again, {"usd": 0.0, "replayed": True}) == sha
    assert len((tmp_path / "programs" / "index.jsonl").read_text().splitlines()) == 2
    adopted_sha, program = shelf.adopt(sha[:10])
    assert adopted_sha == sha and program.program_id == artifact["program_id"]
    assert json.loads((tmp_path / "programs" / "adopted.json").read_text()) == {"static": sha}


def test_ceiling_hit_is_unfinished_with_no_artifact(
    corpus: dict[str, Any], model_server: Any, tmp_path: Path
) -> None:
    model_server.script([{"contains": "Propose", "content": PROPOSALS}, {"content": ANSWER}])
    with pytest.raises(Unfinished, match="unfinished"):
        compile_program(
            SPEC,
            corpus["labels"],
            corpus["analysed"],
            corpus["memory"],
            _client(model_server, tmp_path / "r", usd=0.0005),
        )


def test_identity_and_ties() -> None:
    u = unit("acme/shopfront", "xss", 1)
    assert identity_free("Line 3 writes the name into HTML.", u)
    assert not identity_free("As in shopfront, line 3 is unsafe.", u)
    assert not identity_free("Like CVE-2021-44228, line 3 is unsafe.", u)
    configs = [
        {"score": 0.200, "prompt_tokens": 900, "n": 1},
        {"score": 0.204, "prompt_tokens": 500, "n": 2},
        {"score": 0.190, "prompt_tokens": 800, "n": 3},
    ]
    assert _best(configs, 0.005)["n"] == 3  # 0.190 is best; 0.200 and 0.204 are not within 0.005 of it
    configs[2]["score"] = 0.201
    assert _best(configs, 0.005)["n"] == 2  # all within 0.005 of 0.200: the fewest tokens wins


def test_spec_is_checked(tmp_path: Path) -> None:
    spec = Path(__file__).resolve().parents[3] / "ruleset" / "compile.toml"
    loaded = load_spec(spec)
    assert loaded.usd_ceiling == 3.0 and len(loaded.sha256) == 64
    bad = tmp_path / "compile.toml"
    bad.write_text("[compile]\nseeds = 1\n")
    with pytest.raises(LearnError, match=r"compile\.seeds: not a compile setting"):
        load_spec(bad)


def test_export_keeps_permissive_demos_and_adoption_carries_the_evaluation() -> None:
    from ouroboros_gates.decider.learn.artifacts import exportable, with_evaluation
    from ouroboros_gates.decider.program import Demo, Program

    mine, theirs = unit("a/b", "xss", 1, n=1), replace(unit("c/d", "xss", 0, n=2), licence="unknown")
    demos = tuple(
        Demo(
            example_id=u.uid,
            code="1  f()",
            signals="",
            roles=(),
            family="xss",
            verdict="vulnerable",
            rationale="Line 1 writes it.",
            cited_lines=(1,),
        )
        for u in (mine, theirs)
    )
    program = Program(kind="llm-program", demos=demos)
    shipped = exportable(program, {mine.uid: mine, theirs.uid: theirs})
    assert [d.example_id for d in shipped.demos] == [mine.uid]
    evaluation = {
        "program": {"id": program.program_id},
        "families": {"xss": {"block_offered": False, "block_reason": "calibration"}},
        "adopted": {
            "calibration": {"per_family": {"xss": {"a": 1.5, "b": -0.2, "mode": "per_family"}}},
            "operating_points": {"xss": {"block": 0.9, "advisory": 0.3, "block_reason": None}},
        },
    }
    adopted = with_evaluation(program, evaluation)
    assert adopted.calibration == {"xss": (1.5, -0.2)}
    point = adopted.operating_points["xss"]
    assert (point.advisory, point.block, point.block_offered, point.reason) == (
        0.3,
        0.9,
        False,
        "calibration",
    )
    with pytest.raises(LearnError, match="another program"):
        with_evaluation(shipped, evaluation)
