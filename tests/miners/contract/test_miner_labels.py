"""labels.tsv: good rows parse; every bad row is a LabelsError naming file:row."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ouroboros_gates.miners import LabelsError, MinerUsageError, parse_labels, read_labels

GOOD = (
    "# instance\t+/-\tstart\tflagged\tsource\n"
    "\n"
    "r1\t+\t2026-10-02T08:31:12Z\t2026-10-02T09:08:12Z\t#102\n"
    "r2\t-\t2026-10-02T18:04:45+02:00\t-\toperator\n"
)


def test_rows_parse_with_comments_and_blank_lines_skipped() -> None:
    labels = parse_labels(GOOD, "labels.tsv")
    assert [row.instance for row in labels.rows] == ["r1", "r2"]
    assert labels.lines == (3, 4)
    first, second = labels.rows
    assert first.positive and first.flagged == datetime(2026, 10, 2, 9, 8, 12, tzinfo=UTC)
    assert not second.positive and second.flagged is None
    assert second.start == datetime(2026, 10, 2, 16, 4, 45, tzinfo=UTC)  # normalised to UTC
    assert labels.where("r2") == "labels.tsv:4"


def test_ordered_by_start_and_rendered_back() -> None:
    labels = parse_labels(GOOD, "labels.tsv")
    assert [row.instance for row in labels.ordered()] == ["r1", "r2"]
    again = parse_labels(labels.render(), "again.tsv")
    assert again.rows == labels.rows


def test_flipped_changes_one_sign_only() -> None:
    labels = parse_labels(GOOD, "labels.tsv").flipped(1)
    assert [row.positive for row in labels.rows] == [True, True]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("r1\t+\t2026-10-02T08:31:12Z\t-", "4 tab-separated fields, expected 5"),
        ("r1\t+\t2026-10-02T08:31:12Z\t-\tsrc\textra", "6 tab-separated fields, expected 5"),
        ("r1 + 2026-10-02T08:31:12Z - src", "1 tab-separated fields"),
        ("r1\t?\t2026-10-02T08:31:12Z\t-\tsrc", "the second field is '?', expected + or -"),
        ("r1\t+\tyesterday\t-\tsrc", "start 'yesterday' is not an RFC 3339 time"),
        ("r1\t+\t2026-10-02T08:31:12\t-\tsrc", "with an offset"),
        ("r1\t+\t2026-10-02\t-\tsrc", "with an offset"),
        ("r1\t+\t2026-10-02T08:31:12Z\tsoon\tsrc", "flagged time 'soon' is not an RFC 3339 time"),
        ("r1\t+\t2026-10-02T08:31:12Z\t2026-10-02T08:00:00Z\tsrc", "before its start"),
        ("\t+\t2026-10-02T08:31:12Z\t-\tsrc", "instance"),
    ],
)
def test_a_bad_row_names_file_and_row(line: str, message: str) -> None:
    text = "# header\nr0\t-\t2026-10-01T00:00:00Z\t-\tsrc\n" + line + "\n"
    with pytest.raises(LabelsError) as caught:
        parse_labels(text, "fixtures/labels.tsv")
    assert str(caught.value).startswith("fixtures/labels.tsv:3: ")
    assert message in str(caught.value)
    assert caught.value.row == 3


def test_an_instance_labelled_twice_is_refused() -> None:
    text = "r1\t+\t2026-10-02T08:31:12Z\t-\ta\nr1\t-\t2026-10-03T08:31:12Z\t-\tb\n"
    with pytest.raises(LabelsError, match=r"^l.tsv:2: r1 is labelled twice \(first at row 1\)"):
        parse_labels(text, "l.tsv")


def test_a_missing_file_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(MinerUsageError, match="cannot read the labels"):
        read_labels(tmp_path / "absent.tsv")
