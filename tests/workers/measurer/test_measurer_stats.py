"""OLS with a t interval: the t quantile against the t distribution itself, and fits of known lines."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.workers.measurer import Fit, ols, t_975


def t_cdf(x: float, df: int, steps: int = 4000) -> float:
    """Student's t CDF at x >= 0 by Simpson's rule on the density (a reference independent of the table)."""
    norm: float = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(u: float) -> float:
        return float(norm * (1 + u * u / df) ** (-(df + 1) / 2))

    h = x / steps
    inner = sum((4 if i % 2 else 2) * density(i * h) for i in range(1, steps))
    return 0.5 + h / 3 * (density(0.0) + inner + density(x))


@pytest.mark.parametrize("df", [*range(1, 31), 31, 35, 40, 60, 120, 1000])
def test_t_975_is_the_0975_quantile(df: int) -> None:
    assert t_cdf(t_975(df), df) == pytest.approx(0.975, abs=1e-6)


def test_t_975_known_values() -> None:
    assert t_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_975(10) == pytest.approx(2.2281, abs=1e-4)
    assert t_975(30) == pytest.approx(2.0423, abs=1e-4)
    assert t_975(100_000) == pytest.approx(1.95997, abs=1e-4)


def test_t_975_refuses_no_degrees_of_freedom() -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_975(0)


def test_ols_by_hand() -> None:
    # x = 0, 1, 2; y = 1, 3, 4: mean x 1, mean y 8/3, Sxy = 3, Sxx = 2, slope 1.5, intercept 7/6.
    fit = ols([0.0, 1.0, 2.0], [1.0, 3.0, 4.0])
    assert isinstance(fit, Fit)
    assert fit.slope == pytest.approx(1.5)
    assert fit.intercept == pytest.approx(7 / 6)
    # residuals -1/6, 1/3, -1/6: SSR = 1/6, df = 1, SE = sqrt(1/6 / 1 / 2) = sqrt(1/12).
    assert fit.se == pytest.approx(math.sqrt(1 / 12))
    assert fit.df == 1
    low, high = fit.interval()
    assert low == pytest.approx(1.5 - 12.706204736 * math.sqrt(1 / 12))
    assert high == pytest.approx(1.5 + 12.706204736 * math.sqrt(1 / 12))


def test_ols_too_few_points_and_one_x() -> None:
    assert ols([0.0, 1.0], [1.0, 2.0]) == "2 point(s); a slope with an interval needs 3"
    assert ols([], []) == "0 point(s); a slope with an interval needs 3"
    assert ols([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == "all 3 points share one x value; no slope"
    with pytest.raises(ValueError, match="2 x values but 3 y values"):
        ols([1.0, 2.0], [1.0, 2.0, 3.0])


@given(
    st.floats(-5, 5),
    st.floats(-100, 100),
    st.lists(st.integers(-50, 50), min_size=3, max_size=30, unique=True),
)
def test_ols_recovers_an_exact_line(slope: float, intercept: float, xs: list[int]) -> None:
    fit = ols([float(x) for x in xs], [intercept + slope * x for x in xs])
    assert isinstance(fit, Fit)
    assert fit.slope == pytest.approx(slope, abs=1e-9)
    assert fit.se == pytest.approx(0.0, abs=1e-9)
    low, high = fit.interval()
    assert low <= fit.slope <= high
