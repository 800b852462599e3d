"""The fleet's command lines: a worker named after its role, Celery's own options passed through."""

from __future__ import annotations

import sys

from ouroboros_gates.ops.launch import (
    APP,
    WorkerOptions,
    beat_argv,
    flower_argv,
    node_name,
    worker_argv,
    worker_env,
)
from ouroboros_gates.workers import QUEUES


def _after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_a_worker_is_named_after_its_role_unless_told() -> None:
    assert node_name(["miner"]) == "miner@%h"
    assert node_name(["gpu"]) == "labeler@%h"  # the labeler's queue
    assert node_name(["miner", "decider"]) == "miner+decider@%h"
    assert node_name(list(QUEUES.values())) == "all@%h"
    assert _after(worker_argv(WorkerOptions(queues="gpu")), "-n") == "labeler@%h"
    assert _after(worker_argv(WorkerOptions(queues="gpu", hostname="gpu-1@%h")), "-n") == "gpu-1@%h"


def test_celery_options_are_passed_on() -> None:
    argv = worker_argv(
        WorkerOptions(
            queues="miner, decider",
            pool="threads",
            concurrency=3,
            max_tasks_per_child=9,
            logfile="/var/log/w.log",
            loglevel="DEBUG",
            extra=("-O", "fair"),
        )
    )
    assert argv[:6] == [sys.executable, "-m", "celery", "-A", APP, "worker"]
    assert _after(argv, "-Q") == "miner,decider"
    assert (_after(argv, "-P"), _after(argv, "-c"), _after(argv, "--max-tasks-per-child")) == (
        "threads",
        "3",
        "9",
    )
    assert (_after(argv, "--logfile"), _after(argv, "-l")) == ("/var/log/w.log", "DEBUG")
    assert argv[-2:] == ["-O", "fair"]


def test_autoscale_replaces_the_default_concurrency() -> None:
    argv = worker_argv(WorkerOptions(queues="miner", autoscale="4,1"))
    assert _after(argv, "--autoscale") == "4,1" and "-c" not in argv
    assert _after(worker_argv(WorkerOptions(queues="miner")), "-c") == "2"
    assert _after(worker_argv(WorkerOptions(queues="", concurrency=5)), "-Q") == ",".join(
        dict.fromkeys(QUEUES.values())
    )


def test_beat_and_flower_command_lines() -> None:
    assert beat_argv("/state/celerybeat-schedule", "INFO")[-4:] == [
        "-l",
        "INFO",
        "-s",
        "/state/celerybeat-schedule",
    ]
    flower = flower_argv(5555, "127.0.0.1")
    assert flower[:4] == ["celery", "-A", APP, "flower"] and "--logging=none" in flower


def test_a_worker_on_one_queue_gets_its_role_in_its_own_environment() -> None:
    given = {"PATH": "/bin"}
    assert worker_env(["gpu"], given) == {"PATH": "/bin", "OURO_ROLE": "labeler"}
    assert worker_env(["gpu"], {**given, "OURO_ROLE": "mine"})["OURO_ROLE"] == "mine"  # one given is kept
    assert "OURO_ROLE" not in worker_env(["miner", "decider"], given)
    assert given == {"PATH": "/bin"}  # the caller's environment is left as it was
