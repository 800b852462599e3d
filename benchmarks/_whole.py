"""The whole-process workload of ``benchmarks/datalog.py``: ``ouro datalog run --output P`` against clingo
printing the same relation (``#show``), each as a process of its own on the same rules and facts in files.

Ours reads the rules and the facts (JSON lines), evaluates and writes P in its default form, JSON lines with
each fact's proof (its last step: the rule and its premises), into a folder (``--out DIR``); clingo
(``python -m clingo -V0``, the package's own clingo main) reads the translated program with ``#show d_P/n.``
and the facts as ASP text and prints P's atoms. Each is timed by the CPU seconds the process used (user +
system, from ``wait4``), wall seconds beside, with its peak resident memory; the two outputs are read back
and compared as sets (every line of ours has its proof). Then, in this process, the model is evaluated with
proofs and one atom of P is explained (its proof tree built), timed alone: what ``ouro datalog explain``
adds after evaluation.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from _analyses import Analysis, Facts
from _asp import asp_facts, to_asp
from _markdown import against

from ouroboros_gates.miners.datalog import GroundAtom, ProofNode, Value, check, evaluate, explain, parse

__all__ = ["OUTPUTS", "Process", "whole_process"]

OUTPUTS = {"points-to": "pointsTo", "same-generation": "sg", "negation": "exposed"}
"""The relation each analysis is run for."""

OURO = str(Path(sys.executable).parent / "ouro")
_ATOM = re.compile(r"d_(\w+)\(([^()]*)\)")


@dataclass(frozen=True)
class Process:
    """One command's cost: CPU seconds (user + system), wall seconds, peak resident memory in MiB."""

    cpu: float
    wall: float
    peak_mib: float


_LAUNCHER = """
import json, os, sys
report, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.execv(argv[0], argv)
_pid, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss], out)
"""
"""A small process that starts the command and reports its exit, CPU and peak memory: the kernel keeps a
process's peak across ``exec``, so a command forked straight from this process (which holds clingo and the
facts) would report this one's memory as its own."""


def measure(argv: Sequence[str], folder: Path, stdout: Path | None = None) -> Process:
    """Run ``argv`` to completion, its standard output to ``stdout`` (or nowhere); exits if it fails."""
    report = folder / "rusage.json"
    with open(stdout or os.devnull, "wb") as sink:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, str(report), *argv],
            stdout=sink,
            stderr=subprocess.PIPE,
            check=False,
        )
        wall = time.perf_counter() - start
    code, cpu, peak_kib = json.loads(report.read_text())
    if code not in (0, 10, 20, 30):  # clingo's exit codes say satisfiable or not
        raise SystemExit(f"{argv[0]} failed (exit {code}): {done.stderr.decode('utf-8', 'replace')[-1000:]}")
    return Process(cpu, wall, peak_kib / 1024)


def _value(text: str) -> Value:
    return text[1:-1] if text.startswith('"') else int(text)


def clingo_rows(path: Path, predicate: str) -> set[tuple[Value, ...]]:
    """The atoms of ``d_<predicate>`` clingo printed (the generated inputs hold no quote, comma or paren
    inside a string, so a pattern reads them)."""
    text = path.read_text()
    if "\\" in text:
        raise SystemExit("clingo printed an escape the comparison does not read (benchmark void)")
    return {tuple(map(_value, args.split(","))) for name, args in _ATOM.findall(text) if name == predicate}


def ouro_rows(path: Path) -> set[tuple[Value, ...]]:
    """The rows of a JSON-lines file ours wrote; exits if a line has no proof."""
    found = set()
    with path.open("rb") as lines:
        for line in lines:
            fact = orjson.loads(line)
            if "premises" not in fact["proof"] and "span" not in fact["proof"]:
                raise SystemExit(f"{path}: a line without its proof: {line[:200]!r} (benchmark void)")
            found.add(tuple(arg["text"] if "text" in arg else arg["number"] for arg in fact["args"]))
    return found


def _files(
    analysis: Analysis, facts: Facts, predicate: str, arity: int, folder: Path
) -> tuple[Path, Path, Path, Path]:
    """The rules and facts as ours reads them, and as clingo does."""
    rules, given = folder / f"{analysis.name}.dl", folder / "facts.jsonl"
    rules.write_text(analysis.program)
    given.write_text("".join(json.dumps({"predicate": p, "args": list(args)}) + "\n" for p, args in facts))
    program, lp_facts = folder / f"{analysis.name}.lp", folder / "facts.lp"
    program.write_text(to_asp(parse(analysis.program, rules.name)) + f"#show d_{predicate}/{arity}.\n")
    lp_facts.write_text(asp_facts(facts))
    return rules, given, program, lp_facts


def explain_seconds(analysis: Analysis, facts: Facts, predicate: str) -> tuple[float, int, GroundAtom]:
    """Seconds ``explain`` takes on the last fact of ``predicate`` found, after an evaluation with proofs (not
    timed); the proof's distinct nodes; the atom."""
    checked = check(parse(analysis.program, f"{analysis.name}.dl"))
    model = evaluate(checked, [(p, args, ("facts.jsonl", n)) for n, (p, args) in enumerate(facts, 1)])
    *_, last = model.rows(predicate)
    atom = GroundAtom(predicate, last)
    start = time.perf_counter()
    proof = explain(model, checked.rules, atom)
    seconds = time.perf_counter() - start
    if not isinstance(proof, ProofNode):
        raise SystemExit(f"{atom} is in the model but explain says: {proof} (benchmark void)")
    return seconds, sum(1 for _ in proof.walk()), atom


def whole_process(
    analyses: Sequence[Analysis], size: str, seed: int, table: list[list[str]]
) -> dict[str, float]:
    """Every analysis at ``size``, whole process each way; prints a row per command and the explain row, adds
    their rows to ``table``, returns ours/clingo (CPU) per analysis. Exits if the outputs differ."""
    print(
        f"whole process at size {size} (seed {seed}): `ouro datalog run --output P` (JSON lines with proofs) "
        "against clingo's `#show`; output sets compared"
    )
    print(f"{'':<44}{'rows':>9}{'cpu s':>8}{'wall s':>8}{'peak MiB':>10}")
    ratios: dict[str, float] = {}
    for analysis in analyses:
        predicate, facts = OUTPUTS[analysis.name], analysis.facts(size, seed)
        arity = check(parse(analysis.program)).arities[predicate]
        with tempfile.TemporaryDirectory(prefix="ouro-whole-") as tmp:
            folder = Path(tmp)
            rules, given, program, lp_facts = _files(analysis, facts, predicate, arity, folder)
            argv = [OURO, "datalog", "run", str(rules), str(given), "--output", predicate]
            ours = measure([*argv, "--out", str(folder / "out")], folder)
            clingo = [sys.executable, "-m", "clingo", "-V0", str(program), str(lp_facts)]
            theirs = measure(clingo, folder, folder / "clingo.txt")
            mine = ouro_rows(folder / "out" / f"{predicate}.jsonl")
            if mine != clingo_rows(folder / "clingo.txt", predicate):
                raise SystemExit(
                    f"{analysis.name} {size}: the outputs of {predicate} differ (benchmark void)"
                )
        for name, cost in (
            (f"ours {analysis.name} ({predicate})", ours),
            (f"clingo {analysis.name}", theirs),
        ):
            print(f"{name:<44}{len(mine):>9}{cost.cpu:>8.2f}{cost.wall:>8.2f}{cost.peak_mib:>10.0f}")
        ratios[analysis.name] = ours.cpu / theirs.cpu
        seconds, nodes, atom = explain_seconds(analysis, facts, predicate)
        print(f"explain {atom} after evaluation: {seconds:.3f} s (a proof of {nodes} distinct atoms)")
        table.extend(_rows(f"{analysis.name} {size}", predicate, len(mine), ours, theirs))
        table.append(
            [
                f"`explain` of one {predicate} atom after evaluation (a proof of {nodes:,} distinct atoms)",
                f"{seconds * 1000:.1f} ms",
                "—",
                "—",
            ]
        )
    return ratios


def _rows(case: str, predicate: str, count: int, ours: Process, theirs: Process) -> list[list[str]]:
    """CPU (wall beside it) and peak memory, ours against clingo's, as table rows."""
    what = (
        f"whole process, {case}: `ouro datalog run --output {predicate}` ({count:,} rows, each with its "
        "proof) against clingo's `#show`"
    )
    cpu = [
        f"{ours.cpu:.2f} s ({ours.wall:.2f} s wall)",
        f"{theirs.cpu:.2f} s ({theirs.wall:.2f} s wall)",
        f"{ours.cpu / theirs.cpu:.2f}x",
    ]
    return [
        [f"{what}; CPU", *cpu],
        [f"{what}; peak memory", *against(ours.peak_mib, theirs.peak_mib, "MiB", 0)],
    ]
