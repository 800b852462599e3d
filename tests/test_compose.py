"""compose.yaml and the Dockerfile: valid for Compose, one image built from the checkout (non-root, nothing
installed at start), one named worker service per queue, the model server only in the gpu profile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "compose.yaml"
BINARY = shutil.which("docker-compose")
pytestmark = pytest.mark.skipif(
    BINARY is None,
    reason="docker-compose is not installed (Debian: apt-get install docker-compose)",
)

# One Celery queue per role (the labeler's queue is "gpu"), and the fleet queue: outbox relay, probes.
WORKERS = {
    "worker-fleet": "fleet",
    "worker-miner": "miner",
    "worker-prechecker": "prechecker",
    "worker-labeler": "gpu",
    "worker-fixer": "fixer",
    "worker-decider": "decider",
    "worker-merger": "merger",
    "worker-measurer": "measurer",
}
OURO_SERVICES = {"api", "flower", "beat", *WORKERS}
SERVICES = {"redis", "postgres", "ollama", *OURO_SERVICES}
REQUIRED_ENV = {"FLOWER_BASIC_AUTH": "admin:test-only", "OURO_API_TOKEN": "test-token"}


def compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "OURO_", "FLOWER_"))}
    base.pop("POSTGRES_PASSWORD", None)
    assert BINARY is not None
    return subprocess.run(
        [BINARY, "-f", str(COMPOSE), *args],
        cwd=ROOT,
        env={**base, **(REQUIRED_ENV if env is None else env)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def yaml_to_json(text: str) -> Any:
    """Parse YAML with PyYAML when this interpreter has it, else with the one docker-compose runs on."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        return yaml.safe_load(text)
    assert BINARY is not None
    with open(BINARY, "rb") as fh:
        first = fh.readline().decode("utf-8", "replace")
    interpreter = first[2:].strip().split() if first.startswith("#!") else []
    if not interpreter or "python" not in interpreter[-1]:
        pytest.skip("no YAML parser: PyYAML is not installed and docker-compose is not a Python script")
    code = "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"
    done = subprocess.run(
        [*interpreter, "-c", code], input=text, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"no YAML parser: {done.stderr.strip()[:200]}")
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    """The configuration as Compose resolves it (anchors merged, variables interpolated)."""
    done = compose("config")
    assert done.returncode == 0, done.stderr
    data = yaml_to_json(done.stdout)
    assert isinstance(data, dict)
    return data


def test_config_is_valid() -> None:
    done = compose("config", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_flower_refuses_to_start_without_basic_auth() -> None:
    done = compose("config", "-q", env={"OURO_API_TOKEN": "test-token"})
    assert done.returncode != 0
    assert "set user:password" in done.stderr


def test_api_token_is_required() -> None:
    done = compose("config", "-q", env={"FLOWER_BASIC_AUTH": "admin:test-only"})
    assert done.returncode != 0
    assert "OURO_API_TOKEN" in done.stderr


def test_services_and_profiles_listed_by_compose() -> None:
    services = compose("config", "--services")
    assert services.returncode == 0, services.stderr
    assert set(services.stdout.split()) == SERVICES
    profiles = compose("config", "--profiles")
    assert profiles.returncode == 0, profiles.stderr
    assert profiles.stdout.split() == ["gpu"]


def test_one_worker_service_per_queue(config: dict[str, Any]) -> None:
    services = config["services"]
    queues = {}
    for name, svc in services.items():
        command = svc.get("command") or []
        if command[:2] == ["ouro", "worker"]:
            queues[name] = command[command.index("-Q") + 1]
            role = name.removeprefix("worker-")
            assert command[command.index("-n") + 1] == f"{role}@%h", name  # one name per container in Flower
            assert "--autoscale" in command, name
            high, low = command[command.index("--autoscale") + 1].split(",")
            assert int(high) >= int(low) >= 1, name
    assert queues == WORKERS
    assert len(set(queues.values())) == len(queues)


def test_ouro_services_share_the_anchor(config: dict[str, Any]) -> None:
    services = config["services"]
    for name in OURO_SERVICES:
        svc = services[name]
        assert svc["image"] == "ouroboros-gates:local", name
        assert Path(svc["build"]["context"]).resolve() == ROOT, (
            name
        )  # the one image, built from this checkout
        assert "entrypoint" not in svc, name  # the image's own: nothing is installed when a container starts
        assert not any(":/src" in volume for volume in svc.get("volumes", [])), name
        assert svc["command"][0] == "ouro", name
        env = svc["environment"]
        assert env["OURO_BROKER_URL"] == "redis://redis:6379/0", name
        assert env["OURO_DATABASE_URL"] == "postgresql+psycopg://ouro:ouro@postgres:5432/ouro", name
        assert env["OURO_API_TOKEN"] == "test-token", name
        assert float(env["OURO_SHUTDOWN_S"]) < _seconds(svc["stop_grace_period"]), name
        assert svc["depends_on"] == {
            "redis": {"condition": "service_healthy"},
            "postgres": {"condition": "service_healthy"},
        }, name
        assert "profiles" not in svc, name


def _seconds(duration: str | int) -> float:
    text = str(duration)
    return float(text[:-1]) * {"s": 1, "m": 60}[text[-1]] if text[-1] in "sm" else float(text) / 1e9


def test_the_image_installs_at_build_time_and_runs_unprivileged() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in {"root", "0"}  # the last USER is the one every service runs as
    installs = [i for i, line in enumerate(lines) if "pip install" in line]
    assert installs and all(
        lines[i].startswith(("RUN", "&&")) or lines[i - 1].endswith("\\") for i in installs
    )
    assert not any(line.startswith(("CMD", "ENTRYPOINT")) and "pip" in line for line in lines)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", ".ouroboros"} <= set(ignored)


def test_infrastructure_and_entry_points(config: dict[str, Any]) -> None:
    services = config["services"]
    assert services["redis"]["image"] == "redis:7"
    assert services["postgres"]["image"] == "postgres:16"
    for name in ("redis", "postgres"):
        assert services[name]["healthcheck"]["test"], name
    assert services["api"]["command"][:5] == ["ouro", "serve", "--api-only", "--host", "0.0.0.0"]
    assert services["beat"]["command"] == ["ouro", "beat"]
    assert services["flower"]["command"] == ["ouro", "flower", "--address", "0.0.0.0"]
    assert services["flower"]["environment"]["OURO_FLOWER_BASIC_AUTH"] == "admin:test-only"
    assert "OURO_FLOWER_BASIC_AUTH" not in services["api"]["environment"]


def test_ollama_only_in_the_gpu_profile_with_a_gpu(config: dict[str, Any]) -> None:
    services = config["services"]
    ollama = services["ollama"]
    assert ollama["image"].startswith("ollama/ollama")
    assert ollama["profiles"] == ["gpu"]
    devices = ollama["deploy"]["resources"]["reservations"]["devices"]
    assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices)
    labeler = services["worker-labeler"]
    assert "profiles" not in labeler
    assert labeler["environment"]["OURO_LABELER_MODEL_URL"] == "http://ollama:11434"
    assert labeler["environment"]["OURO_LABELER_MODEL_API"] == "ollama"
    assert labeler["environment"]["OURO_LABELER_MODEL"] == ""  # no model named: requests stay queued
    assert "ollama" not in labeler["depends_on"]


def test_password_reaches_both_sides() -> None:
    done = compose("config", env={**REQUIRED_ENV, "POSTGRES_PASSWORD": "s3cret-pw"})
    assert done.returncode == 0, done.stderr
    assert "postgresql+psycopg://ouro:s3cret-pw@postgres:5432/ouro" in done.stdout
    assert "POSTGRES_PASSWORD: s3cret-pw" in done.stdout


def test_every_queue_the_code_routes_to_has_a_worker(config: dict[str, Any]) -> None:
    routing = pytest.importorskip(
        "ouroboros_gates.workers.app", reason="the workers package is not importable"
    )
    commands = [svc.get("command") or [] for svc in config["services"].values()]
    consumed = {c[c.index("-Q") + 1] for c in commands if c[:2] == ["ouro", "worker"]}
    assert consumed == set(routing.QUEUES.values())
    assert routing.DEAD_LETTER_QUEUE not in consumed, "dead letters wait for a person, not a worker"
