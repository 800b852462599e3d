"""What a scan writes: ``findings.json`` (each finding with its ``decision``, its sink's line and the flow to
it),
``dropped_by_engine.json``, ``manifest.json``, ``findings.md`` (the reported findings, the instruments that
failed, and the dropped candidates, collapsed, each with why) and SARIF 2.1.0 (``sarif.py``); and the compact
lines of a push."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.decide import Decided, Run, fallback_line
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.sarif import to_sarif

__all__ = [
    "compact_lines",
    "decision_fields",
    "failed_lines",
    "finding",
    "flows",
    "manifest",
    "markdown",
    "write_reports",
]


def decision_fields(d: Decided) -> dict[str, Any]:
    """``decision {p, operating_point, program_id, verdict, rationale, cited_lines, signals, offered}`` and
    how it was reached (variant, retrieval, neighbours as counts, never identities)."""
    dec = d.decision
    return {
        "p": dec.p,
        "operating_point": d.operating_point,
        "program_id": dec.program_id,
        "verdict": dec.verdict,
        "rationale": dec.rationale,
        "cited_lines": list(dec.cited_lines),
        "signals": list(dec.signals),
        "offered": dec.offered,
        "variant": dec.variant,
        "retrieval": dec.retrieval,
        "balance": d.balance,
        "neighbours": d.neighbours,
        "votes": d.votes,
        "raw_score": d.raw_score,
        "calibrated": d.calibrated,
        "parse_failed": d.parse_failed,
        "undecided": dec.undecided.value if dec.undecided else None,
        "fallback": d.fallback,
        "dismissed": d.dismissed,
        "usd": dec.cost_usd,
        "model": dec.model,
        "priors": list(dec.priors),
        "evidence": dec.evidence,
        "vote_score": d.vote_score,
    }


def flows(d: Decided) -> tuple[str, ...]:
    """The taint flows the instruments found in the candidate, one line each (source, sink and lines)."""
    return tuple(s.message for s in d.analysed.signals if s.instrument == "taint")


def _states(instruments: Any) -> dict[str, Any]:
    return {k: v.to_json_dict() for k, v in sorted(instruments.items())}


def _flow(d: Decided) -> tuple[int, list[dict[str, Any]]]:
    """The line a finding is at (its sink's) and the flow to it: source, the assignments between, sink."""
    item = d.analysed
    flows = list(d.evidence.flows) or sorted(item.flows, key=lambda f: (f.sanitized, f.sink_line))
    if not flows:
        return _first_signal_line(item), []
    return flows[0].sink_line, _steps(flows[0])


def _first_signal_line(item: Any) -> int:
    """The first line a signal is at; the function's first line when it has none."""
    lines = sorted(s.line for s in item.signals)
    return lines[0] if lines else int(item.start_line)


def _steps(f: Flow) -> list[dict[str, Any]]:
    """A flow as the report shows it: its source, the assignments between, its sink."""
    steps = [{"line": f.source_line, "role": "source", "text": f.source or f.source_kind}]
    steps += [{"line": n, "role": "step", "text": "assigned"} for n in f.steps]
    steps.append({"line": f.sink_line, "role": "sink", "text": f"{f.call} ({f.operation})"})
    return steps


def finding(d: Decided) -> dict[str, Any]:
    """One finding of ``findings.json``: where (the sink's line), which family, the flow to it, the
    instruments' signals, and the decision."""
    item, c = d.analysed, d.decision.candidate
    line, flow = _flow(d)
    return {
        "fingerprint": d.fingerprint,
        "path": c.path,
        "function": c.function,
        "family": c.family,
        "language": item.language,
        "start_line": item.start_line,
        "end_line": item.end_line,
        "pin": c.pin,
        "line": line,
        "flow": flow,
        "signals": [
            {"instrument": s.instrument, "rule": s.rule, "line": s.line, "message": s.message}
            for s in item.signals
        ],
        "changed_lines": list(item.changed_lines),
        "excerpt_sha": d.excerpt.sha,
        "excerpt": d.excerpt.text,
        "record": {"x": dict(item.record.x), "instruments": _states(item.record.instruments)},
        "decision": decision_fields(d),
    }


def manifest(
    run: Run, *, repo: str, head: str, base: str | None, program_source: str, note: str
) -> dict[str, Any]:
    """``manifest.json``: the run's program, spend, fallback and counts."""
    actions = Counter(d.operating_point for d in run.decided)
    return {
        "repo": repo,
        "head": head,
        "base": base,
        "decision": {
            "program_id": run.program_id,
            "variant": run.variant,
            "program_source": program_source,
            "usd": round(run.usd, 8),
            "calls": run.calls,
            "fallback": run.fallback is not None,
            "reason": run.fallback,
            "note": note,
            "memory_snapshot_digest": run.memory_digest,
            "self_excluded": run.self_excluded,
        },
        "counts": {
            "candidates": len(run.decided),
            "block": actions["block"],
            "advisory": actions["advisory"],
            "drop": actions["drop"],
        },
    }


def _line(d: Decided) -> str:
    c, dec = d.decision.candidate, d.decision
    where = f"{c.path}:{_flow(d)[0]} {c.function}"
    if dec.undecided is not None and dec.p is None:
        return (
            f"{dec.action.value:<8} {'-':>5}  {c.family:<18} {where}  ({dec.undecided.value}) {dec.rationale}"
        )
    cited = ", ".join(str(n) for n in dec.cited_lines)
    return (
        f"{dec.action.value:<8} {dec.p:>5.2f}  {c.family:<18} {where}  [{dec.verdict}; lines {cited}] "
        f"{dec.rationale}"
    )


def compact_lines(run: Run, note: str = "") -> list[str]:
    """The compact report: one line per decision (BLOCK first), then the engine line."""
    order = {"block": 0, "advisory": 1, "drop": 2}
    lines = [
        _line(d)
        for d in sorted(run.decided, key=lambda d: (order[d.operating_point], d.decision.candidate.key))
    ]
    if run.fallback:
        lines.append(fallback_line(run.fallback))
    lines.append(_engine_line(run, note))
    if run.self_excluded:
        lines.append("repository is in the corpus: its own cases excluded")
    return lines


def _engine_line(run: Run, note: str) -> str:
    """The program that decided, what it spent in how many calls, and the note."""
    engine = (
        f"program {run.program_id[:12]} ({run.variant or 'none'}); spent ${run.usd:.4f} in "
        f"{run.calls} call(s)"
    )
    return f"{engine}; {note}" if note else engine


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(d: Decided) -> str:
    dec, c = d.decision, d.decision.candidate
    p = "-" if dec.p is None else f"{dec.p:.2f}"
    line, _flow_steps = _flow(d)
    return (
        f"| {dec.action.value} | {p} | {c.family} | `{c.path}:{line}` {c.function} | {dec.verdict or '-'} | "
        f"{_cell(dec.rationale)} |"
    )


def failed_lines(failures: Mapping[str, Sequence[str]]) -> list[str]:
    """One line per instrument that failed on some files (it read nothing of them), with the count."""
    return [
        f"instrument failed: {name} on {len(paths)} file(s), which it did not read (first: "
        f"{', '.join(sorted(paths)[:3])}; every one in manifest.json)"
        for name, paths in sorted(failures.items())
        if paths
    ]


def markdown(run: Run, note: str, failures: Mapping[str, Sequence[str]] | None = None) -> str:
    """``findings.md``: the reported findings, the instruments that failed, the dropped candidates with
    why."""
    header = [
        "| action | p | family | where | verdict | rationale |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    reported, dropped = _reported_and_dropped(run)
    out = [
        *_heading(run, note, failures),
        *_reported_lines(reported, header),
        *_dropped_lines(dropped, header),
    ]
    return "\n".join(out) + "\n"


def _heading(run: Run, note: str, failures: Mapping[str, Sequence[str]] | None) -> list[str]:
    """The title, the program that decided, whether the engine was used, and the instruments that failed."""
    out = [
        "# Findings",
        "",
        f"Program `{run.program_id[:12]}` ({run.variant or 'none'}). {note}".rstrip(),
        "",
    ]
    if run.fallback:
        out += [fallback_line(run.fallback), ""]
    for line in failed_lines(failures or {}):
        out += [f"**{line}**", ""]
    return out


def _reported_and_dropped(run: Run) -> tuple[list[Decided], list[Decided]]:
    """The decisions reported as findings (BLOCK, ADVISORY) and those the engine dropped, in run order."""
    reported = [d for d in run.decided if d.operating_point != "drop"]
    dropped = [d for d in run.decided if d.operating_point == "drop"]
    return reported, dropped


def _reported_lines(reported: Sequence[Decided], header: list[str]) -> list[str]:
    return [*header, *(_row(d) for d in reported)] if reported else ["No finding reported."]


def _dropped_lines(dropped: Sequence[Decided], header: list[str]) -> list[str]:
    """How many candidates the engine dropped, and a folded table of them with why."""
    out = ["", f"{len(dropped)} candidate(s) dropped by the engine (dropped_by_engine.json)."]
    if dropped:
        out += ["", "<details><summary>Dropped candidates, each with why</summary>", "", *header]
        out += [_row(d) for d in sorted(dropped, key=lambda d: d.decision.candidate.key)]
        out += ["", "</details>"]
    return out


def write_reports(
    run: Run, out: Path, meta: dict[str, Any], note: str, failures: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Path]:
    """Write every report file of a scan into ``out``; returns them by name."""
    out.mkdir(parents=True, exist_ok=True)
    reported, not_reported = _reported_and_dropped(run)
    kept = [finding(d) for d in reported]
    dropped = [finding(d) for d in not_reported]
    files = {
        "findings.json": json.dumps(kept, indent=2, sort_keys=True),
        "dropped_by_engine.json": json.dumps(dropped, indent=2, sort_keys=True),
        "manifest.json": json.dumps(meta, indent=2, sort_keys=True),
        "findings.sarif": json.dumps(to_sarif(run, kept, failures), indent=2, sort_keys=True),
        "findings.md": markdown(run, note, failures),
    }
    return _written(out, files)


def _written(out: Path, files: Mapping[str, str]) -> dict[str, Path]:
    """Write each file's text into ``out`` (ending in a newline); returns their paths by name."""
    paths = {}
    for name, text in files.items():
        path = out / name
        path.write_text(text if text.endswith("\n") else text + "\n")
        paths[name] = path
    return paths
