"""The fleet's logging: the level and format the settings name, JSON lines with the task's context, and a log
file that rotates while several processes write it."""

from __future__ import annotations

import json
import logging
import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings, load_settings
from ouroboros_gates.workers.logs import configure


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
        handler.close()
    for handler in list(logging.getLogger("multiprocessing").handlers):
        if getattr(handler, "ouroboros", False):
            logging.getLogger("multiprocessing").removeHandler(handler)
    root.setLevel(level)


def test_json_lines_carry_level_logger_and_message(tmp_path: Path) -> None:
    log = tmp_path / "fleet.log"
    configure(Settings(log_format="json", log_level="info"), log)
    logging.getLogger("ouroboros.test").info("hello %s", "there")
    logging.getLogger("ouroboros.test").debug("not at INFO")
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("ouroboros.test").exception("failed")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["level"], r["logger"], r["message"]) for r in lines] == [
        ("INFO", "ouroboros.test", "hello there"),
        ("ERROR", "ouroboros.test", "failed"),
    ]
    assert "ValueError: boom" in lines[1]["exc_info"] and "time" in lines[0] and "task_id" not in lines[0]


def test_text_lines_at_the_level_named(tmp_path: Path) -> None:
    log = tmp_path / "fleet.log"
    configure(Settings(log_level="WARNING"), log)
    logging.getLogger("ouroboros.test").info("quiet")
    logging.getLogger("ouroboros.test").warning("loud")
    (line,) = log.read_text().splitlines()
    assert line.endswith("WARNING/MainProcess] loud")


def test_a_bad_level_or_format_is_one_error_naming_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_LOG_LEVEL", "chatty")
    with pytest.raises(ConfigurationError, match=r"^OURO_LOG_LEVEL: "):
        load_settings()
    monkeypatch.setenv("OURO_LOG_LEVEL", "debug")
    monkeypatch.setenv("OURO_LOG_FORMAT", "xml")
    with pytest.raises(ConfigurationError, match=r"^OURO_LOG_FORMAT: "):
        load_settings()


def _write(path: str, process: int) -> None:
    configure(Settings(log_max_bytes=4096, log_backups=3, log_format="json"), path)
    for i in range(200):
        logging.getLogger("writer").warning("process %d line %03d %s", process, i, "x" * 40)


def test_the_log_rotates_while_several_processes_write_it(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    workers = [
        multiprocessing.get_context("fork").Process(target=_write, args=(str(log), n)) for n in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    files = sorted(tmp_path.glob("worker.log*"))
    assert [f.name for f in files] == ["worker.log", "worker.log.1", "worker.log.2", "worker.log.3"]
    assert all(f.stat().st_size <= 4096 + 400 for f in files)  # each rotated at the size named (a line over)
    for path in files:  # whole lines only: no two processes wrote into one line or a rotated file at once
        assert all(
            json.loads(line)["message"].startswith("process ") for line in path.read_text().splitlines()
        )
    newest = [json.loads(line)["message"] for line in log.read_text().splitlines()]
    assert any("line 199" in message for message in newest)  # the last lines land in the current file
