"""GPU sharing: the labeler uses the host's GPU only while nothing else does.

Before each batch it lists the running containers through the Docker Engine API (a unix socket) and
yields while any container other than the model server was created with the GPU: Docker's
``--runtime nvidia``, or a device request for the ``nvidia`` driver or the ``gpu`` capability. It looks
again every batch's worth of model time. No socket means sharing is off, and the run says so.

    DockerError      (events.errors.TransientError)   the Engine API did not answer, or answered oddly

httpx's errors are translated here and nowhere else.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from ouroboros_gates.schemas.errors import TransientError
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "DEFAULT_LOOK_S",
    "FIRST_KEEP_ALIVE_S",
    "DockerEngine",
    "DockerError",
    "GpuSharing",
    "has_gpu",
    "keep_alive_s",
    "sharing_from_settings",
]

FIRST_KEEP_ALIVE_S = 300.0
"""Keep-alive of the first batch, before any gap or load is measured: Ollama's own default (5 minutes)."""

DEFAULT_LOOK_S = 30.0
"""How long to wait before looking again while no batch has been timed yet."""


class DockerError(TransientError):
    """The Docker Engine API could not be read."""


def has_gpu(inspect: Mapping[str, Any]) -> bool:
    """Whether a container (``GET /containers/{id}/json``) was created with the GPU."""
    host = inspect.get("HostConfig") or {}
    if _is_nvidia(host, "Runtime"):
        return True
    return any(_requests_gpu(request) for request in host.get("DeviceRequests") or ())


def _requests_gpu(request: Mapping[str, Any]) -> bool:
    """Whether one device request asks for the GPU: by the nvidia driver or a ``gpu`` capability."""
    if _is_nvidia(request, "Driver"):
        return True
    return any("gpu" in (group or ()) for group in request.get("Capabilities") or ())


def _is_nvidia(config: Mapping[str, Any], key: str) -> bool:
    """Whether a container's runtime, or a device request's driver, is NVIDIA's (unset is not)."""
    return str(config.get(key) or "") == "nvidia"


class DockerEngine:
    """The few calls of the Docker Engine API the labeler needs, over its unix socket."""

    def __init__(self, socket_path: Path, timeout_s: float = 5.0) -> None:
        self.socket_path = socket_path
        transport = httpx.HTTPTransport(uds=str(socket_path))
        self._http = httpx.Client(transport=transport, base_url="http://docker", timeout=timeout_s)

    def _get(self, path: str) -> Any:
        try:
            response = self._http.get(path)
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise DockerError(f"Docker Engine API at {self.socket_path}: GET {path}: {exc}") from exc

    def gpu_containers(self) -> list[tuple[str, Mapping[str, Any]]]:
        """``(name, summary)`` of every running container created with the GPU, by name."""
        found = []
        for summary in self._get("/containers/json"):
            inspect = self._get(f"/containers/{summary['Id']}/json")
            if has_gpu(inspect):
                found.append((_container_name(summary, inspect), summary))
        return sorted(found, key=lambda pair: pair[0])

    def close(self) -> None:
        """Close the connection."""
        self._http.close()


def _container_name(summary: Mapping[str, Any], inspect: Mapping[str, Any]) -> str:
    """A container's first name without Docker's leading ``/`` (its short id when it has none)."""
    names = summary.get("Names") or [inspect.get("Name") or summary["Id"][:12]]
    return str(names[0]).lstrip("/")


def _is_model_server(name: str, summary: Mapping[str, Any], container: str | None, port: int | None) -> bool:
    if container:
        return name == container
    return port is not None and _publishes(summary, port)


def _publishes(summary: Mapping[str, Any], port: int) -> bool:
    """Whether a container maps ``port``, on the host's side or its own."""
    ports = summary.get("Ports") or ()
    return any(p.get("PublicPort") == port or p.get("PrivatePort") == port for p in ports)


@dataclass
class GpuSharing:
    """Whether the labeler may use the GPU now, and the waiting when it may not.

    ``container`` names the model server; unset, the container publishing the endpoint's ``port`` is it.
    """

    engine: DockerEngine | None
    container: str | None = None
    port: int | None = None
    sleep: Callable[[float], None] = time.sleep
    notes: list[str] = field(default_factory=list)

    def holders(self) -> list[str]:
        """The other containers holding the GPU now; none when sharing is off or Docker cannot be read."""
        if self.engine is None:
            return []
        try:
            gpu = self.engine.gpu_containers()
        except DockerError as exc:
            self._note(f"GPU sharing skipped a look: {exc}")
            return []
        return [
            name for name, summary in gpu if not _is_model_server(name, summary, self.container, self.port)
        ]

    def _note(self, note: str) -> None:
        """Keep ``note`` for the run to say, once however often it recurs."""
        if note not in self.notes:
            self.notes.append(note)

    def wait_turn(self, look_s: float, on_yield: Callable[[list[str]], None], deadline_s: float) -> float:
        """Yield while another container holds the GPU, looking again every ``look_s``; the seconds
        yielded. Raises ``TimeoutError`` once ``deadline_s`` have been spent waiting."""
        waited = 0.0
        while holders := self.holders():
            if waited >= deadline_s:
                raise TimeoutError(f"the GPU stayed held by {', '.join(holders)} for {waited:.0f} s")
            on_yield(holders)
            self.sleep(look_s)
            waited += look_s
        return waited


def keep_alive_s(batch_starts: Sequence[float], loads_s: Sequence[float]) -> float:
    """The keep-alive each request carries, so the model unloads soon after a run ends.

    keep_alive = max(2 x median gap between batch starts, 2 x measured load): the median gap is how long
    the model waits between two of our batches, so twice it keeps the model loaded through the run's
    ordinary jitter and lets it go about two gaps after the last batch; twice the longest measured load
    is the floor, because unloading sooner than a reload costs would spend more GPU time than it frees.
    Before anything is measured, ``FIRST_KEEP_ALIVE_S``.
    """
    gaps = [later - earlier for earlier, later in itertools.pairwise(batch_starts)]
    if not gaps and not loads_s:
        return FIRST_KEEP_ALIVE_S
    gap = 2.0 * statistics.median(gaps) if gaps else 0.0
    load = 2.0 * max(loads_s) if loads_s else 0.0
    return round(max(gap, load), 3)


def sharing_from_settings(settings: Settings, endpoint_url: str | None = None) -> tuple[GpuSharing, str]:
    """The GPU sharing the settings ask for (``OURO_DOCKER_SOCKET``, ``OURO_MODEL_CONTAINER``), and the line
    the run says about it."""
    socket_path = settings.docker_socket
    port = urlsplit(endpoint_url).port if endpoint_url else None
    if socket_path is None or not socket_path.exists():
        return GpuSharing(None), _sharing_off(socket_path)
    sharing = GpuSharing(DockerEngine(socket_path), container=settings.model_container, port=port)
    return sharing, f"GPU sharing on: Docker at {socket_path}, model server {_model_server(settings, port)}"


def _sharing_off(socket_path: Path | None) -> str:
    """The line the run says when there is no Docker Engine API to ask."""
    where = "unset" if socket_path is None else f"no socket at {socket_path}"
    return f"GPU sharing off: no Docker Engine API (OURO_DOCKER_SOCKET {where})"


def _model_server(settings: Settings, port: int | None) -> str:
    """How the run names the model server: its container, else the port it publishes."""
    return settings.model_container or (f"the container publishing port {port}" if port else "none named")
