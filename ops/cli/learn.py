"""``ouro learn``: labels, memory, evaluation, compile, curves and the leak audit (experiments:
``experiment.py``).

    ouro learn labels [--corpus DIR]… [--sources FILE] [--include-title]   label set from allow-listed sources
    ouro learn memory build [--benchmark DIR --expected CSV]               analyse every labelled unit
    ouro learn evaluate [--program FILE] [--resamples N]                   outer folds, markdown + JSON
    ouro learn evaluate --benchmark DIR --expected CSV [--jobs N]          a labelled benchmark end to end
    ouro learn evaluate --loso --corpora DIR [--markdown FILE]             each shipped source held out in
    turn
    ouro learn memory ship --corpora DIR                                   rebuild the memory that ships
    ouro learn compile --profile P --spec compile.toml                     compile a language-model program
    ouro learn adopt PROGRAM_ID                                            export an indexed program
    ouro learn curve [--program FILE]                                      memory-size learning curve
    ouro learn audit-leaks                                                 signals that separate pair sides

Without ``--corpus`` the shipped seeded corpus (``ruleset/pairs``) is read. Files go under
``<state>/learn/``. Bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ouroboros_gates.ops.cli._learn_common import metered_client, workspace
from ouroboros_gates.ops.cli._learn_common import progress as _progress
from ouroboros_gates.schemas.errors import OuroError

if TYPE_CHECKING:
    from ouroboros_gates.decider.learn import Workspace
    from ouroboros_gates.decider.program import Program

__all__ = [
    "learn_app",
    "metered_client",
    "workspace",
]  # workspace: from _learn_common, used by experiment.py too

RULESET = Path(str(files("ouroboros_gates.ruleset")))
SEEDED = RULESET / "pairs"
learn_app = typer.Typer(no_args_is_help=True, help="Labels, memory, evaluation, compile and curves.")
memory_app = typer.Typer(no_args_is_help=True, help="The example memory.")
learn_app.add_typer(memory_app, name="memory")


@learn_app.command("labels")
def labels_cmd(
    corpus: Annotated[
        list[Path] | None, typer.Option("--corpus", help="A corpus directory (repeatable).")
    ] = None,
    sources: Annotated[
        Path | None, typer.Option(help="The allow-list (default ruleset/sources.toml).")
    ] = None,
    include_title: Annotated[bool, typer.Option("--include-title", help="Keep title-tier pairs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Build the label set from allow-listed sources (a source not listed is never opened)."""
    from ouroboros_gates.decider.learn import build_labels, default_allow_list

    dirs = list(corpus or [SEEDED])
    allow = sources or default_allow_list()
    labels = build_labels(dirs, allow, include_title=include_title)
    snapshot = workspace().save_labels(labels, dirs, allow, include_title)
    summary = labels.summary()
    if as_json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return
    print(
        f"label set {labels.digest[:12]}: {summary['units']} units in {summary['groups']} repository groups "
        f"from {', '.join(summary['sources'])}"
    )
    _print_label_counts(summary)
    print(f"  snapshot: {snapshot}")


def _print_label_counts(summary: dict[str, Any]) -> None:
    """The label set by direction, by language and by family, and what was excluded."""
    print(f"  by direction: {summary['by_direction']}")
    print(f"  by language:  {summary['by_language']}")
    for family, counts in summary["groups_by_family"].items():
        print(f"  {family}: {counts['positive']} positive / {counts['negative']} negative repositories")
    if summary["excluded"]:
        print(f"  excluded: {summary['excluded']}")


@memory_app.command("build")
def memory_build(
    store: Annotated[
        bool, typer.Option(help="Also keep the examples in the decider's store (deployment reads it).")
    ] = True,
    benchmark: Annotated[
        Path | None, typer.Option(help="Also a labelled benchmark's folder (one file a case).")
    ] = (None),
    expected: Annotated[Path | None, typer.Option(help="The benchmark's expected results CSV.")] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Processes analysing the benchmark's files.")] = 1,
) -> None:
    """Analyse every labelled unit with the decider's instruments (model-free; a reach miss has no record).

    With --benchmark and --expected, the benchmark's cases become examples in the decider's store instead
    (one group per case, labelled by the expected results; read in place, never copied into the package)."""
    from ouroboros_gates.decider.learn import analyse_units, build_memory

    given = _benchmark(benchmark, expected)
    if given is not None:
        from ouroboros_gates.ops.cli._learn_evaluate import store_benchmark

        store_benchmark(*given, jobs)
        return
    ws = workspace()
    labels = ws.labels()
    analysed = analyse_units(labels.units, ws.root / "work", _progress("analysed pairs"))
    path = ws.save_analysed(labels.digest, analysed)
    memory, counts = build_memory(labels.units, analysed, labels.digest)
    _check_excerpts(labels.sources, counts)
    print(f"memory {memory.digest[:12]}: {len(memory)} examples from {len(labels.units)} labelled units")
    for key, n in counts.items():
        print(f"  {key}: {n}")
    print(f"  written: {path}")
    if store:
        from ouroboros_gates.decider.learn.keep import keep_examples
        from ouroboros_gates.ops.cli._common import event_store

        print(
            f"  stored: {keep_examples(event_store().side_tables, memory)} new examples in the "
            "decider's store"
        )


def _benchmark(benchmark: Path | None, expected: Path | None) -> tuple[Path, Path] | None:
    """``--benchmark`` and ``--expected`` when given; None when neither is, an error when only one is."""
    if benchmark is None and expected is None:
        return None
    if benchmark is None or expected is None:
        raise OuroError("--benchmark and --expected go together")
    return benchmark, expected


def _check_excerpts(sources: Iterable[str], counts: Mapping[str, int]) -> None:
    """An error naming the first source whose records lack an excerpt more than one time in ten."""
    for source in sources:
        empty, kept = counts.get(f"{source}:empty_excerpt", 0), counts.get(f"{source}:examples", 0)
        if empty * 10 > empty + kept:
            raise OuroError(f"source {source}: {empty} of {empty + kept} records have no excerpt (> 10%)")


@memory_app.command("ship")
def memory_ship(
    corpora: Annotated[
        Path | None,
        typer.Option(help="The folder the allow-listed corpora kept outside the repository lie in."),
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Processes analysing a benchmark's files.")] = 1,
) -> None:
    """Rebuild the memory that ships (ruleset/memory/shipped.json.gz: feature records of every source marked
    ship = true in ruleset/sources.toml, no code) and the packaged memory-vote program fitted on it."""
    from ouroboros_gates.decider.learn.ship import ship
    from ouroboros_gates.ops.cli._learn_common import say

    written, program = ship(corpora, workspace().root / "corpus", jobs=jobs, say=say)
    points = ", ".join(f"{f} {p.advisory:.3f}" for f, p in sorted(program.operating_points.items()))
    print(f"shipped memory: {written} records, digest {program.memory}; program {program.program_id[:12]}")
    print(f"  ADVISORY points: {points}")


@learn_app.command("evaluate")
def evaluate_cmd(
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples of repositories.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the folds and the bootstrap.")] = 0,
    program: Annotated[
        Path | None, typer.Option(help="A program or artifact (default: the memory vote).")
    ] = None,
    name: Annotated[str, typer.Option(help="Report file name under <state>/learn/reports/.")] = "evaluation",
    usd: Annotated[
        float, typer.Option(min=0, help="Ceiling of a language-model program's evaluation.")
    ] = 7.0,
    benchmark: Annotated[
        Path | None, typer.Option(help="A labelled benchmark's source folder (one file a case).")
    ] = (None),
    expected: Annotated[
        Path | None, typer.Option(help="Its expected results: name, category, real, cwe.")
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Processes analysing the benchmark's files.")] = 1,
    with_memory: Annotated[
        bool,
        typer.Option("--with-memory", help="Add the examples of `ouro learn memory build` to every fold."),
    ] = False,
    embed_local: Annotated[
        bool, typer.Option("--embed-local", help="Re-rank by local hashed-n-gram code embeddings ($0).")
    ] = False,
    loso: Annotated[
        bool, typer.Option("--loso", help="Hold each shipped source out in turn: code the memory never saw.")
    ] = False,
    corpora: Annotated[
        Path | None, typer.Option(help="With --loso: where the corpora outside the repository lie.")
    ] = (None),
    markdown: Annotated[
        Path | None, typer.Option(help="Also write the evaluation table as Markdown here.")
    ] = None,
    priors: Annotated[
        str, typer.Option(help="With --benchmark: off, detected (default) or all.")
    ] = "detected",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (what the table's .json file holds).")
    ] = False,
) -> None:
    """Evaluate a program on the outer folds: calibrated cross-fitted, operating points, intervals.

    With --loso: every shipped source held out in turn (the memory and the ADVISORY points built from the
    others only), with priors detected and off, beside any quick-rule finding and Bandit alone on the same
    units. With --benchmark and --expected: score that labelled benchmark end to end (each file scanned as a
    folder), the decider at $0 on grouped folds beside its instruments alone, with case-bootstrap
    intervals."""
    if priors not in ("off", "detected", "all"):
        raise OuroError(f"--priors: {priors!r} is not off, detected or all")
    from ouroboros_gates.ops.cli._learn_evaluate import evaluate_benchmark, evaluate_loso, evaluate_program

    if loso:
        evaluate_loso(
            corpora, jobs=jobs, seed=seed, resamples=resamples, name=name, markdown=markdown, as_json=as_json
        )
        return
    given = _benchmark(benchmark, expected)
    if given is not None:
        evaluate_benchmark(
            *given,
            jobs=jobs,
            seed=seed,
            resamples=resamples,
            name=name,
            with_memory=with_memory,
            priors=priors,
            markdown=markdown,
            as_json=as_json,
        )
        return
    evaluate_program(
        program,
        usd=usd,
        embed_local=embed_local,
        seed=seed,
        resamples=resamples,
        name=name,
        markdown=markdown,
        as_json=as_json,
    )


@learn_app.command("compile")
def compile_cmd(
    spec: Annotated[Path, typer.Option(help="The committed compile spec.")] = RULESET / "compile.toml",
    profile: Annotated[str, typer.Option(help="static or plane.")] = "static",
) -> None:
    """Compile a language-model program (bootstrap few-shot, instruction search) within the spec's ceiling."""
    from ouroboros_gates.decider.learn import build_memory
    from ouroboros_gates.decider.learn.artifacts import ProgramShelf
    from ouroboros_gates.decider.learn.compile import compile_program, load_spec

    if profile not in ("static", "plane"):
        raise OuroError(f"--profile: {profile!r} is not static or plane")
    from ouroboros_gates.decider.learn.registration import committed

    committed(spec)  # pre-registration: the spec is committed before the compile runs
    settings = load_spec(spec)
    ws = workspace()
    labels = ws.labels()
    analysed = ws.analysed(labels.digest)
    memory, _ = build_memory(labels.units, analysed, labels.digest)
    client = metered_client(settings.usd_ceiling, settings.call_ceiling)
    artifact = compile_program(settings, labels, analysed, memory, client, profile=profile)
    run = {
        "usd": round(client.spent_usd, 6),
        "calls": client.calls,
        "cache_hits": client.cache_hits,
        "replayed": client.calls == 0,
    }
    sha = ProgramShelf(ws.root / "programs").put(artifact, run)
    chosen = artifact["compile"]["chosen"]
    print(
        f"compiled {sha} (program {artifact['program_id'][:12]}): {chosen['instruction_source']} with demo "
        "set "
        f"{chosen['demo_set']}, balanced Brier {chosen['score']:.4f} on C_val; ${run['usd']:.4f}, "
        f"{run['calls']} calls, {run['cache_hits']} replayed from the cache"
    )


@learn_app.command("adopt")
def adopt_cmd(
    program_id: Annotated[str, typer.Argument(help="An artifact sha (or a unique prefix).")],
    evaluation: Annotated[
        str | None, typer.Option(help="The program's report: its calibration and points.")
    ] = None,
    export: Annotated[
        bool, typer.Option("--export", help="Also write ruleset/programs/<kind>-<profile>.json.")
    ] = False,
) -> None:
    """Adopt a compiled program: adopted.json, the decider's store, and optionally the package."""
    from ouroboros_gates.decider.learn.artifacts import ProgramShelf, with_evaluation
    from ouroboros_gates.decider.learn.keep import keep_adopted
    from ouroboros_gates.ops.cli._common import event_store

    ws = workspace()
    sha, program = ProgramShelf(ws.root / "programs").adopt(program_id)
    if evaluation is not None:
        report = ws.report_dir() / f"{evaluation}.json"
        if not report.is_file():
            raise OuroError(f"--evaluation: {report}: no such report")
        program = with_evaluation(program, json.loads(report.read_text()))
    keep_adopted(event_store().side_tables, program)
    print(f"adopted {sha} for profile {program.profile} (program {program.program_id[:12]})")
    if export:
        _export(ws, program)


def _export(ws: Workspace, program: Program) -> None:
    """Write the adopted program into the package (its permissively licensed demonstrations only)."""
    from ouroboros_gates.decider.learn.artifacts import exportable

    units = {u.uid: u for u in ws.labels().units}
    shipped = exportable(program, units)
    target = RULESET / "programs" / f"{program.kind}-{program.profile}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(shipped.to_json() + "\n")
    print(
        f"exported {target} with {len(shipped.demos)} of {len(program.demos)} demonstrations "
        "(permissive only)"
    )


@learn_app.command("curve")
def curve_cmd(
    size: Annotated[int, typer.Option(min=10, help="Units in the fixed stratified subset.")] = 200,
    seed: Annotated[int, typer.Option()] = 0,
    resamples: Annotated[int, typer.Option(min=50, help="Bootstrap resamples for the interval on c.")] = 200,
) -> None:
    """Learning curve of the memory-vote program over memory size and sources, with the power-law fit."""
    from ouroboros_gates.decider.learn import build_memory, plan_folds
    from ouroboros_gates.decider.learn.curve import learning_curve
    from ouroboros_gates.decider.learn.programs import ProgramScorer
    from ouroboros_gates.decider.program import Program

    ws = workspace()
    labels = ws.labels()
    analysed = ws.analysed(labels.digest)
    memory, _ = build_memory(labels.units, analysed, labels.digest)
    plan = plan_folds(labels.units, seed)
    program = Program(kind="memory-vote")
    curve = learning_curve(
        labels.units,
        plan,
        analysed,
        memory,
        lambda m: ProgramScorer(program, m, analysed),
        size=size,
        seed=seed,
        resamples=resamples,
    )
    (ws.report_dir() / "curve.json").write_text(json.dumps(curve, indent=1, sort_keys=True) + "\n")
    print(f"subset: {curve['subset_units']} units in {curve['subset_groups']} repositories")
    for p in curve["points"]:
        pr = p["pr_auc"]
        shown = "n/a" if pr["value"] is None else f"{pr['value']:.3f} [{pr['low']:.3f}, {pr['high']:.3f}]"
        print(
            f"  {p['kind']:<7} share {p['share']:<4} draw {p['draw']} sources {','.join(p['sources'])}: "
            f"{p['memory_groups']} memory groups, PR-AUC {shown}"
        )
    print(f"fit: {json.dumps(curve['fit'], sort_keys=True)}")


@learn_app.command("audit-leaks")
def audit_leaks_cmd() -> None:
    """Signals that alone separate the two sides of a pair, functions and changes (flagged above 0.20)."""
    from ouroboros_gates.decider.learn.leaks import audit_leaks

    ws = workspace()
    labels = ws.labels()
    found = audit_leaks(labels.units, ws.analysed(labels.digest))
    (ws.report_dir() / "leaks.json").write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    reach = found["surfaced"]
    print(
        f"{found['pairs']} pairs, {found['both_sides_recorded']} with both sides recorded; surfaced on the "
        f"vulnerable side only {reach['vulnerable_only']}, fixed side only {reach['fixed_only']} "
        f"(separation {reach['separation']:.2f}{', flagged' if reach['flagged'] else ''})"
    )
    _print_separations(found["signals"])
    print(f"delta units: {found['delta_pairs']} pairs, the introducing change against the repair")
    _print_separations(found["delta_signals"])


def _print_separations(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if row["separation"] > 0:
            flag = "  FLAGGED" if row["flagged"] else ""
            print(f"  {row['signal']:<32} {row['separation']:.2f} over {row['pairs']} pairs{flag}")
