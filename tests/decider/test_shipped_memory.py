"""The memory that ships: labelled, name-invariant feature records (no code, no identity) of every source
marked ship = true, valid under the current feature set and instruments, both labels in every family, rebuilt
byte for byte from the same rows, and held together with the packaged memory-vote program by its digest."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ouroboros_gates.decider.assemble import packaged_program
from ouroboros_gates.decider.features import SCHEMA_VERSION, validate_record
from ouroboros_gates.decider.instruments import families
from ouroboros_gates.decider.learn.ship import shipped_sources
from ouroboros_gates.decider.learn.versions import instrument_versions
from ouroboros_gates.decider.shipped import (
    EMPTY_EXCERPT_SHA,
    SHIPPED,
    Row,
    load_rows,
    load_shipped,
    write_shipped,
)

REBUILD = "rebuild with `ouro learn memory ship --corpora ../shared/corpora` (docs/decider.md, 'The memory')"


def test_the_packaged_program_names_the_shipped_memory_it_was_fitted_on() -> None:
    program = packaged_program("memory-vote")
    assert program is not None and program.memory == load_shipped().digest, REBUILD
    assert program.priors == "detected" and set(program.operating_points) >= {"*"}
    assert all(not point.block_offered for point in program.operating_points.values())


def test_every_row_is_a_valid_name_invariant_record_of_a_shipped_source() -> None:
    header, examples = load_rows()
    assert header["versions"] == instrument_versions(), (
        f"the shipped records were built by other instruments: {REBUILD}"
    )
    sources = {s.id for s in shipped_sources()}
    for e in examples:
        validate_record(e.example.x, e.example.instruments, source=f"shipped {e.source}")
        assert e.source in sources and e.excerpt == "" and e.example.excerpt_sha == EMPTY_EXCERPT_SHA
        assert e.group.startswith("g:") and len(e.group) == 18  # an opaque digest, never a repository or case
    assert {e.source for e in examples} == sources


def test_every_family_a_scan_reports_has_examples_of_both_labels() -> None:
    labels = Counter((e.family, e.y) for e in load_shipped().examples)
    missing = [(family, y) for family in families().ids for y in (0, 1) if not labels[(family, y)]]
    assert not missing, f"families without an example of a label: {missing}"


def test_a_rebuild_from_the_same_rows_is_byte_identical(tmp_path: Path) -> None:
    header, examples = load_rows()
    rows = [
        Row(
            e.source,
            e.group,
            e.family,
            e.example.language,
            e.y,
            e.unit,
            dict(e.example.x),
            {k: v.state.value for k, v in e.example.instruments.items()},
        )
        for e in examples
    ]
    write_shipped(reversed(rows), header["versions"], tmp_path / "a.json.gz")
    write_shipped(rows, header["versions"], tmp_path / "b.json.gz")
    assert (
        (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes() == SHIPPED.read_bytes()
    )
    assert load_shipped(tmp_path / "a.json.gz").digest == load_shipped().digest


def test_every_packaged_program_is_built_for_the_current_feature_set() -> None:
    for kind in ("llm-program", "memory-vote"):
        program = packaged_program(kind)
        assert program is not None and program.schema_version == SCHEMA_VERSION, (
            f"{kind}: another feature schema"
        )
