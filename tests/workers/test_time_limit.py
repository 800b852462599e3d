"""The task time limit: one hour unless set, independent of the visibility timeout (a running task's message
is heart-beaten), and applied as Celery's soft limit (the shell dead-letters a task that reaches it:
``test_fleet_integration``)."""

from __future__ import annotations

import pytest

from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers.app import build_app


def test_the_limit_is_an_hour_unless_set() -> None:
    assert Settings().time_limit_s == 3600.0
    assert Settings(visibility_timeout_s=600).time_limit_s == 3600.0
    assert Settings(task_time_limit_s=30).time_limit_s == 30.0
    assert Settings(task_time_limit_s=0).time_limit_s is None  # no limit
    assert Settings(visibility_timeout_s=60, task_time_limit_s=600).time_limit_s == 600.0


def test_celery_gets_it_as_the_soft_limit_and_no_hard_limit() -> None:
    app = build_app(Settings(task_time_limit_s=30), include=False)
    assert app.conf.task_soft_time_limit == 30.0 and app.conf.task_time_limit is None
    assert build_app(Settings(task_time_limit_s=0), include=False).conf.task_soft_time_limit is None


def test_a_bad_limit_is_one_error_naming_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_TASK_TIME_LIMIT_S", "-1")
    with pytest.raises(ConfigurationError, match=r"^OURO_TASK_TIME_LIMIT_S: "):
        load_settings()
    monkeypatch.setenv("OURO_TASK_TIME_LIMIT_S", "inf")
    with pytest.raises(ConfigurationError, match=r"^OURO_TASK_TIME_LIMIT_S: "):
        load_settings()
