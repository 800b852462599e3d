"""Fuzzing ``rules.dl`` (the Datalog parser and checker) and ``labels.tsv``: whatever the text, the only
error is the engine's or the labels' own, naming file:line (and column) inside the text. Both refuse a
file whole at its first bad row (a half-read rule set or label set must never be judged), so the
rows before it are shown good by parsing them alone."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ouroboros_gates.miners.datalog import DatalogError, ParseError, check, parse
from ouroboros_gates.miners.errors import LabelsError
from ouroboros_gates.miners.labels import parse_labels

ROOT = Path(__file__).resolve().parents[2]
RULES = sorted(ROOT.glob("miners/*/rules.dl"))
LABELS = (ROOT / "examples" / "labels.tsv").read_text()
# The dialect's own characters, so the fuzzer reaches deep into the grammar rather than stopping at once.
_PIECES = [*'abcXY_019 (),.:-!"\\/*\n\t', "gt", "lt", ".decl", ":-", "/*", "*/", "symbol", "number", "p(X)"]
DIALECT = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)
QUICK = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _where_is_inside(error: ParseError, text: str) -> None:
    assert error.file == "rules.dl"
    assert 1 <= error.line <= text.count("\n") + 1 and error.column >= 1, str(error)
    assert str(error).startswith(f"rules.dl:{error.line}:{error.column}: ") and error.message


@QUICK
@given(text=DIALECT | st.text(max_size=200))
def test_any_text_parses_or_fails_with_one_located_error(text: str) -> None:
    try:
        program = parse(text, "rules.dl")
    except ParseError as exc:
        _where_is_inside(exc, text)
        return
    try:
        check(program)
    except DatalogError as exc:  # a contract error names the file and line of the clause at fault
        assert "rules.dl:" in str(exc), str(exc)


@QUICK
@given(rules=st.sampled_from(RULES), at=st.floats(0, 1), junk=DIALECT)
def test_real_rules_with_junk_spliced_in(rules: Path, at: float, junk: str) -> None:
    source = rules.read_text()
    cut = int(len(source) * at)
    text = source[:cut] + junk + source[cut:]
    try:
        check(parse(text, "rules.dl"))
    except ParseError as exc:
        _where_is_inside(exc, text)
    except DatalogError as exc:
        assert "rules.dl:" in str(exc), str(exc)


_FIELD = st.text(alphabet=st.characters(blacklist_characters="\t\n\r"), max_size=30)
_ROW = st.lists(_FIELD, min_size=0, max_size=7).map("\t".join)


@QUICK
@given(bad=_ROW, at=st.integers(0, 40), crlf=st.booleans())
def test_a_bad_labels_row_is_named_at_its_own_row(bad: str, at: int, crlf: bool) -> None:
    good = [line for line in LABELS.splitlines() if line.strip() and not line.startswith("#")]
    try:
        parse_labels(bad + "\n", "labels.tsv")
    except LabelsError:
        pass
    else:
        assume(False)  # the generated row happens to be a valid label: nothing to find
    assume(bad.strip() and not bad.lstrip().startswith("#"))
    at = at % (len(good) + 1)
    rows = [*good[:at], bad, *good[at:]]
    try:
        parse_labels(("\r\n" if crlf else "\n").join(rows) + "\n", "labels.tsv")
    except LabelsError as exc:
        assert exc.file == "labels.tsv" and str(exc).startswith(f"labels.tsv:{exc.row}: ") and exc.message
        # The first bad row is the one named: the inserted row, or a repeat of an instance it made.
        assert exc.row >= at + 1
        assert parse_labels("\n".join(rows[: exc.row - 1]) + "\n", "labels.tsv") is not None
        return
    raise AssertionError("a row that fails alone passed among good rows")


@QUICK
@given(text=st.text(max_size=300) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_any_labels_text_reads_or_fails_with_one_located_error(text: str) -> None:
    try:
        parse_labels(text, "labels.tsv")
    except LabelsError as exc:
        assert 1 <= exc.row <= len(text.splitlines()) + 1 and str(exc).startswith(f"labels.tsv:{exc.row}: ")
