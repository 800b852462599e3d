"""GPU sharing against a fake Docker Engine API (a real HTTP server on a unix socket), the keep-alive and
its derivation, and the gpu queue's autoscaler."""

from __future__ import annotations

import json
import socketserver
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.labeler import (
    DockerEngine,
    GpuAutoscaler,
    GpuSharing,
    has_gpu,
    keep_alive_s,
    sharing_from_settings,
)
from ouroboros_gates.workers.labeler.gpu import FIRST_KEEP_ALIVE_S


class FakeDocker(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """``GET /containers/json`` and ``GET /containers/{id}/json`` from a dict of containers."""

    daemon_threads = True

    def __init__(self, path: str) -> None:
        self.containers: dict[str, dict[str, Any]] = {}
        self.requests: list[str] = []
        super().__init__(path, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: FakeDocker

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        containers = self.server.containers
        if self.path == "/containers/json":
            body: Any = [
                {"Id": cid, "Names": [f"/{c['name']}"], "Ports": c.get("ports", [])}
                for cid, c in containers.items()
            ]
        elif self.path.startswith("/containers/") and self.path.endswith("/json"):
            cid = self.path.split("/")[2]
            if cid not in containers:
                self.send_error(404)
                return
            body = {"Id": cid, "Name": f"/{containers[cid]['name']}", "HostConfig": containers[cid]["host"]}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def docker() -> Iterator[FakeDocker]:
    with tempfile.TemporaryDirectory(prefix="dk") as folder:  # short: unix socket paths are limited
        server = FakeDocker(str(Path(folder) / "docker.sock"))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server
        finally:
            server.shutdown()
            server.server_close()


NVIDIA_RUNTIME = {"Runtime": "nvidia"}
DEVICE_DRIVER = {"Runtime": "runc", "DeviceRequests": [{"Driver": "nvidia", "Count": -1}]}
GPU_CAPABILITY = {"DeviceRequests": [{"Driver": "", "Capabilities": [["gpu", "utility"]]}]}
PLAIN = {"Runtime": "runc", "DeviceRequests": None}


def test_a_container_has_the_gpu_by_runtime_driver_or_capability() -> None:
    assert has_gpu({"HostConfig": NVIDIA_RUNTIME}) and has_gpu({"HostConfig": DEVICE_DRIVER})
    assert has_gpu({"HostConfig": GPU_CAPABILITY})
    assert not has_gpu({"HostConfig": PLAIN}) and not has_gpu({})
    assert not has_gpu(
        {"HostConfig": {"DeviceRequests": [{"Driver": "other", "Capabilities": [["compute"]]}]}}
    )


def test_the_model_server_does_not_count_and_any_other_gpu_container_does(docker: FakeDocker) -> None:
    docker.containers = {
        "a1": {"name": "ollama-1", "host": DEVICE_DRIVER},
        "b2": {"name": "web", "host": PLAIN},
        "c3": {"name": "trainer", "host": NVIDIA_RUNTIME},
    }
    engine = DockerEngine(Path(docker.server_address))  # type: ignore[arg-type]
    by_name = GpuSharing(engine, container="ollama-1")
    assert by_name.holders() == ["trainer"]
    docker.containers["a1"]["ports"] = [{"PrivatePort": 11434, "PublicPort": 11434, "Type": "tcp"}]
    assert GpuSharing(engine, port=11434).holders() == ["trainer"]  # the container publishing the endpoint
    assert GpuSharing(engine).holders() == ["ollama-1", "trainer"]
    del docker.containers["c3"]
    assert by_name.holders() == []
    assert "/containers/json" in docker.requests and "/containers/a1/json" in docker.requests
    engine.close()


def test_the_labeler_yields_and_looks_again_every_batch_worth_of_time(docker: FakeDocker) -> None:
    docker.containers = {"c3": {"name": "trainer", "host": GPU_CAPABILITY}}
    slept: list[float] = []
    yielded: list[list[str]] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 3:
            docker.containers.clear()  # the other job ends

    sharing = GpuSharing(DockerEngine(Path(docker.server_address)), container="ollama-1", sleep=sleep)  # type: ignore[arg-type]
    assert sharing.wait_turn(7.5, yielded.append, deadline_s=3600) == 22.5
    assert slept == [7.5, 7.5, 7.5] and yielded == [["trainer"]] * 3
    docker.containers = {"c3": {"name": "trainer", "host": GPU_CAPABILITY}}
    with pytest.raises(TimeoutError, match="held by trainer"):
        sharing.wait_turn(10.0, yielded.append, deadline_s=20.0)


def test_no_socket_turns_sharing_off_and_the_run_says_so(tmp_path: Path, docker: FakeDocker) -> None:
    sharing, note = sharing_from_settings(Settings(state=tmp_path, docker_socket=tmp_path / "none.sock"))
    assert sharing.engine is None and sharing.holders() == []
    assert (
        note
        == f"GPU sharing off: no Docker Engine API (OURO_DOCKER_SOCKET no socket at {tmp_path / 'none.sock'})"
    )
    on, note = sharing_from_settings(
        Settings(state=tmp_path, docker_socket=Path(docker.server_address)),
        "http://127.0.0.1:11434",  # type: ignore[arg-type]
    )
    assert on.engine is not None and on.port == 11434 and note.startswith("GPU sharing on:")
    on.engine.close()


def test_a_docker_api_that_fails_is_noted_and_does_not_stop_the_run(tmp_path: Path) -> None:
    dead = tmp_path / "dead.sock"
    dead.touch()  # a file that is not a socket
    sharing = GpuSharing(DockerEngine(dead))
    assert sharing.holders() == [] and sharing.notes[0].startswith(
        "GPU sharing skipped a look: Docker Engine API"
    )


def test_keep_alive_is_twice_the_median_gap_floored_at_twice_the_load() -> None:
    assert keep_alive_s([], []) == FIRST_KEEP_ALIVE_S
    assert keep_alive_s([0.0, 10.0, 30.0, 40.0], []) == 20.0  # gaps 10, 20, 10: median 10
    assert keep_alive_s([0.0, 10.0, 30.0, 40.0], [2.4, 15.0]) == 30.0  # the longest load, twice
    assert keep_alive_s([0.0], [2.4]) == 4.8


class _Pool:
    def __init__(self, processes: int) -> None:
        self.num_processes = processes
        self.grown: list[int] = []
        self.shrunk: list[int] = []

    def grow(self, n: int) -> None:
        self.grown.append(n)
        self.num_processes += n

    def shrink(self, n: int) -> None:
        self.shrunk.append(n)
        self.num_processes -= n

    def maintain_pool(self) -> None:
        return


def test_the_autoscaler_follows_queue_depth_and_does_not_grow_while_the_gpu_is_yielded() -> None:
    depth = {"n": 3}
    holders: dict[str, list[str]] = {"now": ["trainer"]}
    pool = _Pool(1)
    scaler = GpuAutoscaler(
        pool, 4, 1, keepalive=0.001, depth=lambda: depth["n"], gpu_holders=lambda: holders["now"]
    )
    scaler.maybe_scale()
    assert pool.grown == [] and scaler.yielded_to == ["trainer"]
    holders["now"] = []
    scaler.maybe_scale()
    assert pool.grown == [2] and pool.num_processes == 3
    depth["n"] = 10
    scaler.maybe_scale()
    assert pool.num_processes == 4  # never above max
    depth["n"] = 0
    scaler._last_scale_up = 0.0  # long ago: past the keep-alive
    scaler.maybe_scale()
    assert pool.num_processes == 1  # never below min


def test_celery_uses_it_and_it_reads_the_gpu_queues_depth_from_the_broker(tmp_path: Path) -> None:
    from celery.utils.imports import symbol_by_name

    from ouroboros_gates.schemas import LabelTicket
    from ouroboros_gates.workers.app import app, build_app, declare_queues
    from ouroboros_gates.workers.shell import publish

    assert symbol_by_name(app.conf.worker_autoscaler) is GpuAutoscaler
    broker = build_app(Settings(state=tmp_path), include=False)
    declare_queues(broker)
    for n in (44, 48):
        publish(LabelTicket(message_id=f"label-{n}-depth", ticket=n), via=broker)
    worker = SimpleNamespace(app=broker)
    assert GpuAutoscaler(_Pool(1), 4, 1, worker=worker, gpu_holders=list)._broker_depth() == 2


def test_a_worker_not_on_the_gpu_queue_scales_as_celery_does() -> None:
    queues = SimpleNamespace(consume_from={"miner": object()})
    worker = SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=queues)))
    pool = _Pool(1)
    scaler = GpuAutoscaler(pool, 3, 1, worker=worker, depth=lambda: 50, gpu_holders=lambda: ["trainer"])
    scaler.maybe_scale()  # Celery's rule: reserved tasks (none) between min and max; the GPU is not asked
    assert pool.grown == [] and pool.num_processes == 1 and scaler.yielded_to == []
