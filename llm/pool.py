"""Calls run concurrently with a bound on how many are in flight (eight by default: docs/decider.md,
"Classify(k)"), results in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, TypeVar, overload

__all__ = ["MAX_IN_FLIGHT", "run_bounded"]

MAX_IN_FLIGHT = 8
T = TypeVar("T")


@overload
def run_bounded(
    calls: Sequence[Callable[[], T]], max_in_flight: int = ..., *, return_exceptions: Literal[False] = ...
) -> list[T]: ...


@overload
def run_bounded(
    calls: Sequence[Callable[[], T]], max_in_flight: int = ..., *, return_exceptions: Literal[True]
) -> list[T | Exception]: ...


def run_bounded(
    calls: Sequence[Callable[[], T]], max_in_flight: int = MAX_IN_FLIGHT, *, return_exceptions: bool = False
) -> list[T] | list[T | Exception]:
    """Run every call with at most ``max_in_flight`` at once; results in the calls' order.

    Every call runs to its end; then the first failure (in order) is raised, unless ``return_exceptions``
    puts each failure in its call's place.
    """
    if max_in_flight < 1:
        raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
    if not calls:
        return []
    outcomes = _outcomes(calls, max_in_flight)
    if return_exceptions:
        return outcomes
    _raise_first_failure(outcomes)
    return outcomes


def _outcomes(calls: Sequence[Callable[[], T]], max_in_flight: int) -> list[T | Exception]:
    """Each call's result or the exception it raised, in the calls' order, every call run to its end."""
    outcomes: list[T | Exception] = []
    with ThreadPoolExecutor(max_workers=min(max_in_flight, len(calls)), thread_name_prefix="llm") as pool:
        futures = [pool.submit(call) for call in calls]
        for future in futures:
            error = future.exception()
            outcomes.append(error if isinstance(error, Exception) else future.result())
    return outcomes


def _raise_first_failure(outcomes: Sequence[object]) -> None:
    """Raise the first exception among ``outcomes``, if any."""
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            raise outcome
