"""The evaluations of ``ouro learn evaluate``: a program on the workspace's outer folds, a labelled benchmark,
and each shipped source held out (``learn.py`` parses the options and calls these)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ouroboros_gates.ops.cli._learn_common import metered_client, say, workspace
from ouroboros_gates.ops.cli._learn_common import progress as _progress
from ouroboros_gates.ops.cli._output import print_json
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["evaluate_benchmark", "evaluate_loso", "evaluate_program", "say", "show", "store_benchmark"]


def store_benchmark(benchmark: Path, expected: Path, jobs: int) -> None:
    import hashlib
    from dataclasses import replace

    from ouroboros_gates.decider.learn.benchmark import analyse_cases, benchmark_memory, load_cases
    from ouroboros_gates.decider.learn.keep import keep_examples
    from ouroboros_gates.decider.memory import Memory
    from ouroboros_gates.ops.cli._common import event_store

    cases = load_cases(benchmark, expected)
    analysed, skipped = analyse_cases(cases, benchmark, jobs=jobs, progress=_progress("analysed files"))
    digest = hashlib.sha256(expected.read_bytes()).hexdigest()
    examples = [replace(e, id="", label_set_digest=digest) for e in benchmark_memory(cases, analysed)]
    new = keep_examples(event_store().side_tables, Memory(examples))
    positives = sum(e.y for e in examples)
    print(
        f"benchmark {expected.name}: {len(examples)} examples ({positives} vulnerable) from {len(cases)} "
        "cases, "
        f"{len(skipped)} file(s) skipped; stored: {new} new examples in the decider's store"
    )


def show(table: str, result: dict[str, Any], said: str, as_json: bool) -> None:
    """The evaluation's table and what was written (stdout); with ``--json`` the report's JSON on stdout
    instead of the table, and what was written on stderr."""
    if as_json:
        print_json(json.dumps(result, indent=1, sort_keys=True))
        print(said, file=sys.stderr)
        return
    print(table)
    print(said)


def evaluate_loso(
    corpora: Path | None,
    *,
    jobs: int,
    seed: int,
    resamples: int,
    name: str,
    markdown: Path | None,
    as_json: bool = False,
) -> None:
    from ouroboros_gates.decider.learn.ship import evaluate, render

    result = evaluate(
        corpora, workspace().root / "corpus", jobs=jobs, resamples=resamples, seed=seed, say=say
    )
    command = "ouro learn evaluate --loso --corpora ../shared/corpora" + (
        f" --jobs {jobs}" if jobs > 1 else ""
    )
    table = render(result, command)
    written = _write(name if name != "evaluation" else "loso", result, table, markdown)
    show(table, result, f"written: {written}", as_json)


def evaluate_benchmark(
    benchmark: Path,
    expected: Path,
    *,
    jobs: int,
    seed: int,
    resamples: int,
    name: str,
    with_memory: bool,
    priors: str = "detected",
    markdown: Path | None = None,
    as_json: bool = False,
) -> None:
    import time

    from ouroboros_gates.decider.assemble import packaged_program
    from ouroboros_gates.decider.learn.benchmark import (
        analyse_cases,
        evaluate_benchmark,
        load_cases,
        render_benchmark,
    )

    cases = load_cases(benchmark, expected)
    started = time.monotonic()
    chosen: Any = priors
    analysed, skipped = analyse_cases(
        cases, benchmark, jobs=jobs, progress=_progress("analysed files"), priors=chosen
    )
    analysed_s = time.monotonic() - started
    extra = None
    if with_memory:
        from ouroboros_gates.decider.learn import build_memory

        ws = workspace()
        labels = ws.labels()
        extra, _ = build_memory(labels.units, ws.analysed(labels.digest), labels.digest)
    program = packaged_program("memory-vote")
    if program is None:
        raise OuroError("no packaged memory-vote program in ruleset/programs/")
    result = evaluate_benchmark(
        cases,
        analysed,
        program,
        extra=extra,
        seed=seed,
        resamples=resamples,
        progress=_progress("decided folds"),
    )
    result["skipped"] = skipped
    result["seconds"] = {"analyse": round(analysed_s, 1), "total": round(time.monotonic() - started, 1)}
    table = render_benchmark(result)
    written = _write(name if name != "evaluation" else "benchmark", result, table, markdown)
    said = (
        f"{len(cases)} cases in {result['seconds']['total']} s ({result['seconds']['analyse']} s analysing, "
        f"{jobs} process(es)); written: {written}"
    )
    show(table, result, said, as_json)


def _write(stem: str, result: dict[str, Any], table: str, markdown: Path | None) -> str:
    """The report as JSON and Markdown under ``<state>/learn/reports/`` (and the table at ``--markdown``)."""
    out = workspace().report_dir()
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    (out / f"{stem}.md").write_text(table)
    if markdown is not None:
        markdown.write_text(table)
    return f"{out / stem}.json, {out / stem}.md" + (f", {markdown}" if markdown else "")


def evaluate_program(
    program: Path | None,
    *,
    usd: float,
    embed_local: bool,
    seed: int,
    resamples: int,
    name: str,
    markdown: Path | None,
    as_json: bool,
) -> None:
    """Evaluate a program (default: the memory vote) on the workspace's outer folds and write its report."""
    from ouroboros_gates.decider.learn import build_memory, evaluate, plan_folds, render_markdown, score_folds
    from ouroboros_gates.decider.learn.artifacts import load_program_file
    from ouroboros_gates.decider.learn.programs import ProgramScorer
    from ouroboros_gates.decider.program import Program

    ws = workspace()
    labels = ws.labels()
    analysed = ws.analysed(labels.digest)
    memory, _ = build_memory(labels.units, analysed, labels.digest)
    chosen = load_program_file(program) if program is not None else Program(kind="memory-vote")
    client = metered_client(usd, None) if chosen.kind == "llm-program" else None
    from ouroboros_gates.decider.embed import HashingEmbedder

    scorer = ProgramScorer(
        chosen, memory, analysed, client=client, embedder=HashingEmbedder() if embed_local else None
    )
    plan = plan_folds(labels.units, seed)
    raws = score_folds(labels.units, plan.outer, scorer, _progress("scored units"))
    result = evaluate(
        labels, plan, scorer, resamples=resamples, seed=seed, program=scorer.describe(), raws=raws
    )
    table = render_markdown(result.data)
    out = ws.report_dir()
    (out / f"{name}.json").write_text(json.dumps(result.data, indent=1, sort_keys=True) + "\n")
    (out / f"{name}.md").write_text(table)
    if markdown is not None:
        markdown.write_text(table)
    show(table, result.data, f"written: {out / name}.json, {out / name}.md", as_json)
