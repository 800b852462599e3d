"""Typed configuration for every process of the fleet, read once from the environment (prefix ``OURO_``).

A worker-specific key beats the shared one: ``OURO_MINER_DATABASE_URL`` wins over ``OURO_DATABASE_URL``
for a process started with role ``miner``.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ouroboros_gates.schemas.errors import ConfigurationError

__all__ = ["ROLES", "Settings", "load_settings"]

ROLES = ("miner", "prechecker", "labeler", "fixer", "decider", "merger", "measurer")


class Settings(BaseSettings):
    """Every setting of Ouroboros, with its default; see the README's configuration table."""

    model_config = SettingsConfigDict(env_prefix="OURO_", extra="ignore", frozen=True)

    state: Path = Field(default=Path(".ouroboros"), description="State directory: runs, SQLite log, snapshot.")
    database_url: str | None = Field(default=None, description="Event log URL; SQLite under the state dir.")
    broker_url: str | None = Field(default=None, description="Celery broker; kombu's SQLite transport.")
    visibility_timeout_s: int = Field(
        default=60,
        ge=3,
        description="Seconds after which a message taken by a worker that stopped heart-beating it is redelivered.",
    )
    restore_interval_s: float = Field(default=5.0, gt=0, description="How often messages past it are looked for.")
    task_time_limit_s: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="Seconds a task may run before it is stopped and dead-lettered; unset: one hour; 0: no limit.",
    )
    shutdown_s: float = Field(
        default=20.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="Seconds a stopping process lets running tasks finish before it requeues them.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="INFO", description="Level of every process's log."
    )
    log_format: Literal["text", "json"] = Field(default="text", description="Log lines as text or JSON objects.")
    log_max_bytes: int = Field(default=10 * 2**20, ge=2**10, description="A log file is rotated at this size.")
    log_backups: int = Field(default=5, ge=1, le=100, description="Rotated log files kept.")
    outbox_redeliver_s: float = Field(
        default=3600.0, gt=0, description="A published follow-up no worker recorded this long is published again."
    )
    max_retries: int = Field(default=5, ge=0, le=50, description="Retries of a failing task before DLQ.")
    retry_backoff_s: float = Field(default=2.0, gt=0, description="First retry delay; doubles each time.")
    retry_backoff_max_s: float = Field(default=300.0, gt=0, description="Ceiling of the retry delay.")
    api_host: str = Field(default="127.0.0.1", description="Address the API binds to.")
    api_port: int = Field(default=14120, ge=1, le=65535, description="Port of the API and ops page.")
    api_token: str | None = Field(default=None, description="Bearer token required by API writes.")
    flower_basic_auth: str | None = Field(default=None, description="user:password for Flower.")
    fixer_daily_cap_usd: float = Field(
        default=0.0, ge=0, allow_inf_nan=False, description="Fixers' daily spend cap (USD); 0 keeps fixers off."
    )
    fixer_session_usd: float = Field(
        default=1.5, gt=0, allow_inf_nan=False, description="Reserved per fixer session (~2x $79.37/107)."
    )
    fixer_command: str = Field(
        default="claude -p --output-format stream-json --verbose", description="Fixer agent command (brief last)."
    )
    fixers: bool = Field(default=False, description="Launch fixer sessions (needs a sandbox and a cap > 0).")
    merge_gate: str | None = Field(default=None, description="Merge gate command; the checks + miner test if unset.")
    forge: str = Field(default="examples", description="Local forge folder (forge/, repo.bundle) or github:OWNER/NAME.")
    repository: Path | None = Field(default=None, description="Checkout fixers branch from with a GitHub forge.")
    tenant: str = Field(default="default", min_length=1, description="Tenant recorded on every message.")
    timezone: str = Field(default="America/Los_Angeles", description="Zone of days, weeks and cron.")
    roots: str | None = Field(
        default=None, description="Paths a message may name, separated by ':'; the working directory if unset."
    )
    polling_interval_s: float = Field(default=0.1, gt=0, description="How often an idle worker polls Redis.")
    model_api: Literal["openai", "ollama"] | None = Field(default=None, description="Chat API; the manifest's.")
    model_url: str | None = Field(default=None, description="Chat server URL (OpenAI: up to /v1).")
    model: str | None = Field(default=None, description="Chat model id (ruleset/models); unset: no chat model.")
    model_api_key: SecretStr | None = Field(default=None, description="Bearer key of the chat server.")
    model_timeout_s: float = Field(default=60.0, gt=0, description="Seconds a model call may take.")
    model_keep_alive_s: float | None = Field(default=None, description="Ollama keep_alive in seconds.")
    model_usd_ceiling: float | None = Field(default=None, ge=0, allow_inf_nan=False, description="USD per run.")
    model_call_ceiling: int | None = Field(default=None, ge=0, description="Model calls per run.")
    embed_api: Literal["openai", "ollama"] | None = Field(default=None, description="Embedding API.")
    embed_url: str | None = Field(default=None, description="Embedding server URL (OpenAI: up to /v1).")
    embed_model: str | None = Field(default=None, description="Embedding model id; unset: no embeddings.")
    embed_api_key: SecretStr | None = Field(default=None, description="Bearer key of the embedding server.")
    decider_program: Path | None = Field(default=None, description="Compiled decision program (first in lookup).")
    decider_deadline_s: float = Field(default=30.0, gt=0, description="Seconds a push waits for its decisions.")
    decider_push_usd: float = Field(default=0.10, ge=0, allow_inf_nan=False, description="Decide budget per push.")
    decider_push_calls: int = Field(default=120, ge=0, description="Model calls per push.")
    decider_adapt: bool = Field(default=False, description="Opt-in user adaptation from dismissals in the repo.")
    docker_socket: Path | None = Field(
        default=Path("/var/run/docker.sock"), description="Docker Engine API socket for GPU sharing; absent: off."
    )
    model_container: str | None = Field(default=None, description="The model server's container (GPU sharing).")
    labeler_batch: int = Field(default=8, ge=1, le=64, description="Candidates per labelling call.")
    labeler_candidates: int = Field(default=48, ge=1, description="Candidates labelled per ticket, best first.")

    @field_validator("database_url", "broker_url")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        return value or None

    @field_validator("docker_socket", "model_container", mode="before")
    @classmethod
    def _off_when_blank(cls, value: object) -> object:
        return value or None

    @field_validator("model_api", "model_url", "model", "embed_api", "embed_url", "embed_model", mode="before")
    @classmethod
    def _unset_when_blank(cls, value: object) -> object:
        return value or None

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        return value.strip().upper() if info.field_name == "log_level" else value.strip().lower()

    @field_validator("flower_basic_auth")
    @classmethod
    def _user_and_password(cls, value: str | None) -> str | None:
        # Flower takes "user:password[,user:password...]"; "admin:" would let anyone in as admin.
        if not value:
            return None
        for pair in value.split(","):
            user, colon, password = pair.partition(":")
            if not (user.strip() and colon and password):
                raise ValueError("set user:password (each pair with a user and a password, separated by ',')")
        return value

    @property
    def time_limit_s(self) -> float | None:
        """How long a task may run (None: no limit): the setting, else one hour. A running task's message is
        heart-beaten by its worker, so the limit need not be below the visibility timeout."""
        if self.task_time_limit_s is None:
            return 3600.0
        return self.task_time_limit_s or None

    @property
    def heartbeat_s(self) -> float:
        """How often a worker tells the broker it still holds its messages: four times a visibility timeout."""
        return self.visibility_timeout_s / 4

    @cached_property
    def state_dir(self) -> Path:
        """The state directory as an absolute path (created on first use)."""
        path = self.state.expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path

    @cached_property
    def allowed_roots(self) -> tuple[Path, ...]:
        """The state directory and the configured roots: paths in messages must lie under one (resolved once:
        every message with a path asks)."""
        named = [Path(p).expanduser().resolve() for p in (self.roots or "").split(os.pathsep) if p]
        return (self.state_dir, *(named or [Path.cwd().resolve()]))

    @property
    def event_log_url(self) -> str:
        """The event log's SQLAlchemy URL."""
        return self.database_url or f"sqlite:///{self.state_dir / 'events.sqlite'}"

    @property
    def celery_broker_url(self) -> str:
        """The broker URL; the embedded default needs no server."""
        return self.broker_url or f"sqla+sqlite:///{self.state_dir / 'broker.sqlite'}"

    @property
    def embedded(self) -> bool:
        """True when the broker is the embedded, server-less transport."""
        return self.celery_broker_url.startswith("sqla+")


def load_settings(role: str | None = None) -> Settings:
    """Read the settings, letting ``OURO_<ROLE>_<KEY>`` override ``OURO_<KEY>`` for one worker role."""
    overrides: dict[str, str] = {}
    if role:
        prefix = f"OURO_{role.upper()}_"
        for key, value in os.environ.items():
            name = key[len(prefix) :].lower()
            if key.startswith(prefix) and name in Settings.model_fields:
                overrides[name] = value
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        key = "OURO_" + "_".join(str(part) for part in first["loc"]).upper()
        raise ConfigurationError(f"{key}: {first['msg']}") from exc
