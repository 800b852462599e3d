"""Cost folding: a cumulative counter that restarts from zero when the process is reopened."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.harness import SessionCosts, fold_cumulative

costs = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)


def _segments() -> st.SearchStrategy[list[list[float]]]:
    """Processes: each a non-decreasing run that starts strictly below where the previous one ended."""

    def build(raw: list[list[float]]) -> list[list[float]]:
        out: list[list[float]] = []
        for values in raw:
            run = sorted(values)
            if out and run[0] >= out[-1][-1]:
                continue  # not a restart: it would merge with the previous process
            out.append(run)
        return out

    return st.lists(st.lists(costs, min_size=1, max_size=6), min_size=1, max_size=6).map(build)


@given(st.lists(costs, min_size=1, max_size=40).map(sorted))
def test_a_non_decreasing_sequence_folds_to_its_maximum(values: list[float]) -> None:
    assert fold_cumulative(values) == max(values)


@given(_segments())
def test_the_fold_is_the_sum_of_the_segment_maxima(processes: list[list[float]]) -> None:
    flat = [value for run in processes for value in run]
    assert fold_cumulative(flat) == pytest.approx(sum(run[-1] for run in processes))


@given(st.lists(costs, min_size=1, max_size=40))
def test_the_fold_is_at_least_the_last_value_and_the_maximum(values: list[float]) -> None:
    folded = fold_cumulative(values)
    assert folded >= values[-1]
    assert folded >= max(values) - 1e-9
    assert folded <= sum(values) + 1e-9


@given(st.lists(st.tuples(st.sampled_from("abc"), costs), max_size=40))
def test_sessions_fold_apart_whatever_the_interleaving(readings: list[tuple[str, float]]) -> None:
    folds = SessionCosts()
    for session, value in readings:
        folds.add(session, value)
    expected = sum(
        fold_cumulative([v for s, v in readings if s == name]) for name in {s for s, _ in readings}
    )
    assert (folds.total is None) == (not readings)
    assert (folds.total or 0.0) == pytest.approx(expected)


def test_known_values() -> None:
    assert fold_cumulative([]) == 0.0
    assert fold_cumulative([0.25, 0.1, 0.3]) == pytest.approx(0.55)
    assert fold_cumulative([0.5, 0.5, 0.75]) == 0.75
