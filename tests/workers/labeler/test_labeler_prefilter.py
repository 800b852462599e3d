"""The prefilter: terms from fact lines and predicate, IDF scores, interleaving, excerpts with cut marks,
determinism (the same answer however the files are read), and the request completed from a ticket."""

from __future__ import annotations

import importlib
import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.forge import LocalForge
from ouroboros_gates.schemas import CorpusKind, LabelRequest
from ouroboros_gates.workers.labeler import (
    CUT,
    Source,
    complete,
    prefilter,
    proposal_fields,
    read_line,
    terms_of,
)
from ouroboros_gates.workers.labeler.prefilter import EXCERPT_CHARS
from ouroboros_gates.workers.labeler.scan import scan_file
from ouroboros_gates.workers.labeler.terms import Term

# The package exports the function ``prefilter``, which hides the module of that name.
prefilter_module = importlib.import_module("ouroboros_gates.workers.labeler.prefilter")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_terms_are_quoted_literals_snake_case_names_flags_of_the_facts_and_backticks_of_the_predicate() -> (
    None
):
    facts = ['pattern_kill(R, L) :- a Bash "pkill -f" with --full or -f', 'x :- "say \\"hi\\""']
    terms = terms_of(facts, "runs `pgrep -f` and `Exit code 143` (not this_one outside backticks)")
    assert [(t.text, t.origin) for t in terms] == [
        ("pkill -f", "quoted"),
        ("pattern_kill", "snake_case"),
        ("-f", "flag"),
        ("--full", "flag"),
        ('say "hi"', "quoted"),
        ("pgrep -f", "backticked"),
        ("Exit code 143", "backticked"),
    ]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_scores_are_idf_over_every_line_and_candidates_interleave_across_instances(tmp_path: Path) -> None:
    common, rare = Term("common", "quoted"), Term("rare_one", "snake_case")
    verbose = _write(tmp_path / "a.jsonl", ["common"] * 6 + ["common rare_one", "nothing"])
    quiet = _write(tmp_path / "b.jsonl", ["nothing", "common"])
    found = prefilter([Source("a", str(verbose), verbose), Source("b", str(quiet), quiet)], [common, rare])
    assert found.lines == 10 and found.df == {"common": 8, "rare_one": 1} and found.found == 8
    first = found.candidates[0]
    assert (first.instance, first.line, first.terms) == ("a", 7, ("rare_one", "common"))
    assert math.isclose(first.score, round(math.log(10 / 8) + math.log(10), 6))
    # The quiet instance's only line comes second, not after the verbose run's six.
    assert [(c.instance, c.line) for c in found.candidates[:3]] == [("a", 7), ("b", 2), ("a", 1)]
    assert len(prefilter([Source("a", str(verbose), verbose)], [common], limit=2).candidates) == 2


def test_a_term_on_every_line_counts_for_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", ["x tool_use", "y tool_use"])
    found = prefilter([Source("r", str(path), path)], [Term("tool_use", "snake_case")])
    assert [c.score for c in found.candidates] == [0.0, 0.0]


def test_the_excerpt_is_centred_on_the_rarest_term_with_cut_marks(tmp_path: Path) -> None:
    line = "a" * 1000 + " common " + "b" * 1000 + " rare_one " + "c" * 1000
    path = _write(tmp_path / "r.jsonl", [line, "common"])
    found = prefilter([Source("r", str(path), path)], [Term("common", "quoted"), Term("rare_one", "quoted")])
    excerpt = found.candidates[0].excerpt
    assert excerpt.startswith(CUT) and excerpt.endswith(CUT) and len(excerpt) == EXCERPT_CHARS + 2
    middle = excerpt.index("rare_one") + len("rare_one") // 2
    assert abs(middle - len(excerpt) // 2) <= 2


def test_a_json_escaped_literal_still_finds_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", ['{"command": "grep \\"is_error\\": true"}'])
    found = prefilter([Source("r", str(path), path)], terms_of(['x :- "\\"is_error\\": true"'], ""))
    assert [c.line for c in found.candidates] == [1]


_LINES = st.lists(
    st.sampled_from(["alpha", "beta_gamma", "-f", "x", "alpha -f", "ünï beta_gamma", ""]), max_size=40
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=4), st.integers(min_value=1, max_value=64))
def test_the_answer_does_not_depend_on_how_files_are_read(runs: list[list[str]], block: int) -> None:
    terms = [Term("alpha", "quoted"), Term("beta_gamma", "snake_case"), Term("-f", "flag")]
    forms = [(t.text.encode(), i) for i, t in enumerate(terms)]
    with tempfile.TemporaryDirectory() as folder:
        sources = [
            Source(f"run-{n}", f"run-{n}", _write(Path(folder) / f"{n}.jsonl", lines))
            for n, lines in enumerate(runs)
        ]
        in_memory = [
            Source(s.instance, s.name, text=tuple(lines)) for s, lines in zip(sources, runs, strict=True)
        ]
        once, again = prefilter(sources, terms), prefilter(sources, terms, threads=2)
        assert once == again
        assert [(c.instance, c.line, c.score, c.terms) for c in once.candidates] == [
            (c.instance, c.line, c.score, c.terms) for c in prefilter(in_memory, terms).candidates
        ]
        for source, lines in zip(sources, runs, strict=True):
            assert source.path is not None
            assert scan_file(source.path, forms, block=block) == scan_file(source.path, forms)
            expected = [n for n, text in enumerate(lines, 1) if any(t.text in text for t in terms)]
            assert [hit.line for hit in scan_file(source.path, forms, block=block).hits()] == expected
            assert all(read_line(source, n) == text for n, text in enumerate(lines, 1))
            assert read_line(source, len(lines) + 1) is None


def test_a_ticket_alone_is_completed_from_its_latest_proposal_and_a_row_keeps_its_values(
    tmp_path: Path,
) -> None:
    forge = LocalForge.from_examples(EXAMPLES, tmp_path)
    job = complete(None, forge.ticket(44))
    assert (job.miner, job.corpus, job.proposal) == ("self-match", (CorpusKind.JSONL,), 3391204417)
    assert job.facts[1].startswith("pattern_kill(R, L)") and "`Exit code 143`" in job.predicate
    assert job.predicate.startswith("Miner: pgrep -f / pkill -f") and "Seen again tonight" in job.words
    row = LabelRequest(ticket=44, miner="other-miner", corpus=(CorpusKind.ISSUE,), at="2026-10-03T09:00:00Z")
    kept = complete(row, forge.ticket(44))
    assert (kept.miner, kept.corpus, kept.facts) == ("other-miner", (CorpusKind.ISSUE,), job.facts)


def test_a_malformed_proposal_is_read_key_by_key(tmp_path: Path) -> None:
    job = complete(None, LocalForge.from_examples(EXAMPLES, tmp_path).ticket(48))
    assert job.miner == "cache-ratio" and job.facts and job.instances == ()
    assert job.notes == ("proposal 3391262284: unreadable keys instances, labels",)
    assert proposal_fields("no block here") is None


def test_files_scanned_in_parallel_threads_give_the_same_answer(tmp_path: Path, monkeypatch: Any) -> None:
    runs = [["alpha x", "-f", "beta_gamma alpha"] * 50, ["y", "alpha", "zz -f"] * 40]
    sources = [
        Source(f"r{n}", f"r{n}", _write(tmp_path / f"{n}.jsonl", lines)) for n, lines in enumerate(runs)
    ]
    terms = [Term("alpha", "quoted"), Term("beta_gamma", "snake_case"), Term("-f", "flag")]
    serial = prefilter(sources, terms, limit=20, threads=1)
    monkeypatch.setattr(prefilter_module, "_PARALLEL_BYTES", 0)
    assert prefilter(sources, terms, limit=20, threads=2) == serial
    assert serial.found == 50 * 3 + 40 * 2 and len(serial.candidates) == 20


def test_many_terms_are_found_by_table_as_few_are_by_comparison(tmp_path: Path) -> None:
    words = [f"{chr(97 + i)}{chr(98 + i)}_term{i}" for i in range(16)]  # 16 distinct first pairs
    lines = [" ".join(words[i : i + 3]) + " filler" for i in range(16)] + ["nothing here", words[15]]
    path = _write(tmp_path / "r.jsonl", lines)
    for count in (4, 16):  # below and above the number of pairs compared one by one
        terms = [Term(w, "snake_case") for w in words[:count]]
        forms = [(t.text.encode(), i) for i, t in enumerate(terms)]
        expected = [
            (n, frozenset(i for i, t in enumerate(terms) if t.text in text))
            for n, text in enumerate(lines, 1)
        ]
        assert [(h.line, h.terms) for h in scan_file(path, forms).hits()] == [
            (n, t) for n, t in expected if t
        ]


def test_a_term_that_holds_another_is_found_by_it_wherever_it_stands(tmp_path: Path) -> None:
    terms = [
        Term("pkill -f PATTERN", "backticked"),
        Term("pkill -f", "quoted"),
        Term("-f", "flag"),
        Term("l -", "x"),
    ]
    lines = ["-f", "pkill -f", "xpkill -f PATTERNx", "pkill -", "ill -f", "-f pkill -f PATTERN"]
    path = _write(tmp_path / "r.jsonl", lines)
    forms = [(t.text.encode(), i) for i, t in enumerate(terms)]
    expected = [
        (n, frozenset(i for i, t in enumerate(terms) if t.text in text)) for n, text in enumerate(lines, 1)
    ]
    assert [(h.line, h.terms) for h in scan_file(path, forms).hits()] == [(n, t) for n, t in expected if t]


_BYTES = st.text(alphabet='ab-_"\\ ', min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_BYTES, min_size=1, max_size=6),
    st.lists(st.text(alphabet='ab-_"\\ é', max_size=60), max_size=30),
    st.integers(min_value=1, max_value=200),
)
def test_every_line_carrying_a_form_is_found_with_exactly_its_terms(
    texts: list[str], lines: list[str], block: int
) -> None:
    """Forms that share pairs, hold one another, run past a 64-bit word, or stand at a block's edges: the
    scan agrees with ``in`` on every line, however the file is cut into blocks."""
    forms = [(text.encode(), index) for index, text in enumerate(texts)]
    expected = [
        (n, frozenset(i for form, i in forms if len(form) >= 2 and form in line.encode()))
        for n, line in enumerate(lines, 1)
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder) / "r.jsonl", lines)
        for size in (block, 1 << 20):
            assert [(h.line, h.terms) for h in scan_file(path, forms, block=size).hits()] == [
                (n, t) for n, t in expected if t
            ]


def test_file_at_searches_each_commit_message_and_the_files_it_changed_as_they_stood(tmp_path: Path) -> None:
    from ouroboros_gates.workers.labeler import sources_for
    from ouroboros_gates.workers.labeler.request import Job

    forge = LocalForge.from_examples(EXAMPLES, tmp_path)
    job = Job(
        ticket=44,
        proposal=None,
        miner=None,
        corpus=(CorpusKind.FILE_AT,),
        instances=("bd0245e", "f" * 40),
        reason="",
        predicate="`search_products`",
        facts=(),
        words="",
    )
    sources, notes = sources_for(job, {}, forge)
    full = "bd0245e589eae64527bf26804f0d2094844147fe"
    names = [s.name for s in sources if s.instance == full]
    assert names == [f"commit {full}", f"{full}:shop/db.py", f"{full}:tests/test_db.py"]
    assert notes == [f"file_at: no commit {'f' * 40} in the repository"]
    found = prefilter([s for s in sources if s.instance == full], [Term("search_products", "backticked")])
    files = {c.file for c in found.candidates}
    assert {f"commit {full}", f"{full}:shop/db.py", f"{full}:tests/test_db.py"} <= files
    line = next(c for c in found.candidates if c.file == f"{full}:shop/db.py")
    text = forge.file_at(full, "shop/db.py").decode().splitlines()[line.line - 1]
    assert "search_products" in text and line.excerpt.strip(CUT) in text
    unheld = forge.pull_requests()[0].commits[0]  # the example pull requests' commits are not in the bundle
    assert not forge.has_commit(unheld.sha)
    [message] = [s for s in sources if s.name == f"commit {unheld.sha}"]  # searched by its message alone
    assert message.text == tuple(unheld.message.splitlines())


def test_jsonl_searches_every_file_of_a_session_its_subagents_too(tmp_path: Path) -> None:
    from ouroboros_gates.workers.labeler import sources_for
    from ouroboros_gates.workers.labeler.request import Job

    def line(text: str, **extra: Any) -> str:
        doc = {"type": "user", "sessionId": "s-1", "uuid": text, "message": {"role": "user", "content": text}}
        return json.dumps({**doc, **extra}) + "\n"

    main = tmp_path / "s-1.jsonl"
    main.write_text(line("ls -la") + line("git status"))
    agents = tmp_path / "s-1" / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-a1.jsonl").write_text(
        line("make", isSidechain=True) + line("pkill -f worker", isSidechain=True)
    )
    job = Job(
        ticket=7,
        proposal=None,
        miner=None,
        corpus=(CorpusKind.JSONL,),
        instances=(),
        reason="",
        predicate="`pkill`",
        facts=(),
        words="",
    )
    sources, notes = sources_for(job, {"s-1": tmp_path / "s-1"}, None)  # the session, as ingest records it
    assert [(s.instance, s.path) for s in sources] == [("s-1", main), ("s-1", agents / "agent-a1.jsonl")]
    found = prefilter(sources, [Term("pkill", "backticked")])
    assert [(c.file, c.line) for c in found.candidates] == [(str(agents / "agent-a1.jsonl"), 2)]
    assert "pkill -f worker" in (read_line(sources[1], 2) or "") and notes == []
