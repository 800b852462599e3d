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
from ouroboros_gates.schemas.statedir import default_state_dir, make_state_dir

__all__ = ["ROLES", "SAMPLE", "Settings", "load_settings"]

ROLES = ("miner", "prechecker", "labeler", "fixer", "decider", "merger", "measurer")

SAMPLE = Path(__file__).resolve().parent.parent / "examples"
"""The sample corpus and its forge, shipped with the package: what ``ouro loop`` and ``OURO_FORGE=sample``
read."""


class Settings(BaseSettings):
    """Every setting of Ouroboros, with its default and meaning (docs/reference/configuration.md is made from
    them).

    ``ouro hook`` runs on every tool call and reads its own settings (``hook_*``) from the environment without
    this model, by the same names; the model is where they are declared and documented."""

    model_config = SettingsConfigDict(env_prefix="OURO_", extra="ignore", frozen=True)

    state: Path = Field(
        default_factory=lambda: Path(default_state_dir()),
        description="state directory: runs, the SQLite log, the embedded broker, snapshots; unset: the "
        "project's "
        "folder in the user's state directory (`$XDG_STATE_HOME/ouroboros/<project>`, by default "
        "`~/.local/state/ouroboros/<project>`), never inside the repository; one made inside a checkout is "
        "git-ignored",
    )
    record_prompts: bool = Field(
        default=False,
        description="`1`: the hook records `UserPromptSubmit`'s prompt text too (otherwise only its length)",
    )
    database_url: str | None = Field(
        default=None,
        description="the event log (`postgresql+psycopg://…` at scale); unset: `sqlite:///<state>/events.sqlite`",
    )
    broker_url: str | None = Field(
        default=None,
        description="the Celery broker (`redis://…` at scale); unset: `sqla+sqlite:///<state>/broker.sqlite`",
    )
    visibility_timeout_s: int = Field(
        default=60,
        ge=3,
        description="seconds after which a message taken by a worker that stopped heart-beating it is "
        "redelivered "
        "(Redis and the embedded broker alike; the worker heart-beats what it holds four times as often)",
    )
    restore_interval_s: float = Field(
        default=5.0, gt=0, description="how often workers look for messages past the visibility timeout"
    )
    task_time_limit_s: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="seconds a task may run; past it the task is stopped (its pool child gets Celery's soft "
        "time "
        "limit) and its message dead-lettered with the reason, not retried; `0`: no limit; unset: one hour",
    )
    shutdown_s: float = Field(
        default=20.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="seconds a stopping process (SIGTERM) lets running tasks finish before it puts them "
        "back on "
        "their queue",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="INFO", description="level of every process's log (any case)"
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="log lines as text or as JSON objects (one per line)"
    )
    log_max_bytes: int = Field(default=10 * 2**20, ge=2**10, description="a log file is rotated at this size")
    log_backups: int = Field(default=5, ge=1, le=100, description="rotated log files kept")
    outbox_redeliver_s: float = Field(
        default=3600.0,
        gt=0,
        description=(
            "a follow-up published this long ago that no worker has recorded (a message the broker lost) is "
            "published again by the outbox sweep"
        ),
    )
    max_retries: int = Field(
        default=5, ge=0, le=50, description="retries of a failing task before the dead-letter queue"
    )
    retry_backoff_s: float = Field(default=2.0, gt=0, description="first retry delay; doubles each retry")
    retry_backoff_max_s: float = Field(default=300.0, gt=0, description="ceiling of the retry delay")
    api_host: str = Field(default="127.0.0.1", description="API bind address")
    api_port: int = Field(default=14120, ge=1, le=65535, description="API port")
    api_token: str | None = Field(
        default=None, description="bearer token every API write requires (writes are refused without it)"
    )
    api_hosts: str | None = Field(
        default=None,
        description="host names the API answers besides 127.0.0.1, localhost, [::1] and its bind address, "
        "comma-separated (a request naming any other host is refused: DNS rebinding)",
    )
    flower_basic_auth: str | None = Field(default=None, description="`user:password` for Flower (required)")
    fixer_daily_cap_usd: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="fixers' daily spend cap in USD (the day is an `OURO_TIMEZONE` day); 0 keeps fixers off",
    )
    fixer_session_usd: float = Field(
        default=1.5,
        gt=0,
        allow_inf_nan=False,
        description=(
            "what each session reserves from the day's cap before it starts (about twice the $0.74 mean of "
            "107 "
            "sessions, $79.37, on 2026-10-03); the agent is stopped when its folded cost reaches it"
        ),
    )
    fixer_command: str = Field(
        default="claude -p --output-format stream-json --verbose",
        description=(
            "the fixer agent, run by argument list with the brief as its last argument, its stream-json "
            "recorded "
            "as a run"
        ),
    )
    fixers: bool = Field(
        default=False,
        description=(
            "`1` (or `--fixers`): launch fixer sessions on launch verdicts; they refuse unattended launch "
            "without"
            " a sandbox (bubblewrap)"
        ),
    )
    fixer_hosts: str | None = Field(
        default=None,
        description=(
            "`host[:port]` entries (commas or spaces) a fixer agent may reach through the sandbox's proxy; "
            "empty: "
            "no network at all; unset: `api.anthropic.com:443`, plus `github.com:443 api.github.com:443` "
            "with a "
            "GitHub forge"
        ),
    )
    merge_gate: str | None = Field(
        default=None,
        description=(
            "the merge train's gate command (`{pr}`, `{head}`, `{base}` substituted; exit 0 passes); unset: "
            "every"
            " check on the head exited 0, plus `ouro miner test NAME` for a `miner` pull request"
        ),
    )
    forge: str = Field(
        default="sample",
        description=(
            "`sample` (the sample forge shipped with the package), a local forge folder (`forge/tickets`, "
            "`forge/pulls`, `repo.bundle`; writes go to `<state>/forge`) or `github:OWNER/NAME` (the "
            "`github` "
            "extra; token from `GH_TOKEN`/`GITHUB_TOKEN`); `ouro loop CORPUS` uses `CORPUS/forge` when it "
            "exists"
        ),
    )
    repository: Path | None = Field(
        default=None,
        description="with a GitHub forge: the checkout fixers make their worktrees from and the merge gate "
        "runs in",
    )
    tenant: str = Field(default="default", min_length=1, description="tenant recorded on every message")
    timezone: str = Field(default="America/Los_Angeles", description="zone of days, weeks and cron triggers")
    roots: str | None = Field(
        default=None,
        description=(
            "`:`-separated roots that paths in messages must lie under (the state directory always is; "
            "`ouro loop` "
            "adds the sample corpus it runs on); unset: the working directory"
        ),
    )
    polling_interval_s: float = Field(default=0.1, gt=0, description="Redis: how often an idle worker polls")
    model_api: Literal["openai", "ollama"] | None = Field(
        default=None,
        description=(
            "`openai` (`/v1/chat/completions`: DeepSeek, OpenRouter, vLLM, llama.cpp) or `ollama` "
            "(`/api/chat`); "
            "unset: the manifest's, else `openai`"
        ),
    )
    model_url: str | None = Field(
        default=None,
        description=(
            "the chat server: up to `/v1` for `openai` (`https://api.deepseek.com/v1`), the root for "
            "`ollama` "
            "(`http://127.0.0.1:11434`); unset: the manifest's, else a local server"
        ),
    )
    model: str | None = Field(
        default=None,
        description=(
            "chat model id, a manifest in `ruleset/models/` (`deepseek-chat`, `qwen3:8b`, `local`, …) or a "
            "name "
            "the server knows; unset: no chat model (the decider votes from memory at $0). "
            "`OURO_LABELER_MODEL`, "
            "`OURO_DECIDER_MODEL`… pick one per role"
        ),
    )
    model_api_key: SecretStr | None = Field(
        default=None, description="bearer key of the chat server; never printed or logged"
    )
    model_timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="seconds one model call may take before it counts as a transient failure",
    )
    model_keep_alive_s: float | None = Field(
        default=None, description="Ollama `keep_alive`: seconds the model stays loaded after a call"
    )
    model_usd_ceiling: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description=(
            "USD one run may spend on model calls; each call reserves its worst case first, so concurrent "
            "calls "
            "never pass it"
        ),
    )
    model_call_ceiling: int | None = Field(default=None, ge=0, description="model calls one run may make")
    embed_api: Literal["openai", "ollama"] | None = Field(
        default=None,
        description="`openai` (`/v1/embeddings`) or `ollama` (`/api/embed`); unset: the manifest's, else "
        "`openai`",
    )
    embed_url: str | None = Field(
        default=None,
        description="the embedding server, as for `OURO_MODEL_URL`; unset: the manifest's, else a local "
        "server",
    )
    embed_model: str | None = Field(
        default=None,
        description=(
            "embedding model id (`nomic-embed-text`, `openrouter/openai/text-embedding-3-small`); unset: "
            "retrieval runs on signals only"
        ),
    )
    embed_api_key: SecretStr | None = Field(
        default=None, description="bearer key of the embedding server (a chat key is never sent to it)"
    )
    decider_program: Path | None = Field(
        default=None,
        description=(
            "a compiled decision program (JSON); first in the lookup: this file, the store's adopted "
            "program, the"
            " packaged `ruleset/programs/` one"
        ),
    )
    decider_deadline_s: float = Field(
        default=30.0,
        gt=0,
        description=(
            "seconds `ouro pre-push` waits for decisions; a candidate not decided by then is `undecided: "
            "deadline` (ADVISORY, unscored)"
        ),
    )
    decider_push_usd: float = Field(
        default=0.10,
        ge=0,
        allow_inf_nan=False,
        description=(
            "model spend ceiling per push or scan (USD); reaching it falls back to the rule output for the "
            "rest"
        ),
    )
    decider_push_calls: int = Field(default=120, ge=0, description="model calls per push or scan")
    decider_adapt: bool = Field(
        default=False,
        description=(
            "`1`: keep your dismissals in `.ouroboros/decisions/dismissals.jsonl` in your repository; at 10 "
            "or "
            "more they form a user-local memory (never written to the store)"
        ),
    )
    docker_socket: Path | None = Field(
        default=Path("/var/run/docker.sock"),
        description=(
            "the Docker Engine API the labeler asks before each batch whether another container holds the "
            "GPU; "
            "empty or absent: GPU sharing off (the run says so)"
        ),
    )
    model_container: str | None = Field(
        default=None,
        description=(
            "the model server's container, which never counts as another GPU user; unset: the container "
            "publishing the model endpoint's port"
        ),
    )
    labeler_batch: int = Field(default=8, ge=1, le=64, description="candidate lines per labelling call")
    hook_timeout_s: float = Field(
        default=5.0,
        ge=0.1,
        le=600,
        allow_inf_nan=False,
        description="`ouro hook` allows the call (one warning line) when no decision comes in time: it "
        "never blocks "
        "the agent",
    )
    hook_autoflush: bool = Field(
        default=True, description="`0` stops `Stop`/`SessionEnd` hooks from flushing the spool to the broker"
    )
    hook_trace: bool = Field(
        default=False,
        description="`1`: the hook writes the gate server's decision and timing on one stderr line",
    )
    hook_warn: Literal["next", "sync"] = Field(
        default="next",
        description="`next`: warn gates answer on the session's next call (off the call's path); `sync`: on "
        "the "
        "same call (slower: a warn gate whose miner is not `LOCAL` reads the whole run again)",
    )
    gate_idle_s: float = Field(
        default=1800.0,
        ge=1,
        le=604_800,
        allow_inf_nan=False,
        description="seconds an idle gate server waits before it exits",
    )
    gate_fail: Literal["open", "closed"] = Field(
        default="open",
        description="what a PreToolUse call the deny gates could not judge gets: `open` allows it with a "
        "warning "
        "line, `closed` denies it saying why",
    )
    miners_path: str | None = Field(
        default=None, description="`:`-separated directories of a tenant's own miners, outside the package"
    )
    role: str | None = Field(
        default=None,
        description="which role's overrides (`OURO_<ROLE>_<KEY>`) apply; set by `ouro worker -Q <one queue>`",
    )
    labeler_candidates: int = Field(
        default=48,
        ge=1,
        description="candidate lines sent to the model per ticket, best IDF score first, interleaved across "
        "instances",
    )

    @field_validator("database_url", "broker_url")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        return value or None

    @field_validator("docker_socket", "model_container", mode="before")
    @classmethod
    def _off_when_blank(cls, value: object) -> object:
        return value or None

    @field_validator(
        "model_api", "model_url", "model", "embed_api", "embed_url", "embed_model", mode="before"
    )
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
        """How often a worker tells the broker it still holds its messages: four times a visibility
        timeout."""
        return self.visibility_timeout_s / 4

    @cached_property
    def state_dir(self) -> Path:
        """The state directory as an absolute path (created on first use; git-ignored inside a checkout)."""
        return Path(make_state_dir(str(self.state.expanduser().resolve())))

    @cached_property
    def allowed_roots(self) -> tuple[Path, ...]:
        """The state directory and the configured roots: paths in messages must lie under one (resolved once:
        every message with a path asks)."""
        named = [Path(p).expanduser().resolve() for p in (self.roots or "").split(os.pathsep) if p]
        return (self.state_dir, *(named or [Path.cwd().resolve()]))

    def with_roots(self, *paths: str | Path) -> Settings:
        """These settings with ``paths`` added to ``roots`` (a worker started with them reads there too)."""
        roots = os.pathsep.join(filter(None, [self.roots, *map(str, paths)]))
        copied = self.model_copy(update={"roots": roots})
        copied.__dict__.pop("allowed_roots", None)  # the copy's roots are new: resolve them again
        return copied

    @property
    def forge_folder(self) -> Path:
        """The local forge's folder (``sample``: the one shipped with the package)."""
        return SAMPLE if self.forge == "sample" else Path(self.forge).expanduser()

    @property
    def api_host_names(self) -> tuple[str, ...]:
        """``OURO_API_HOSTS`` as names (a trailing port is not part of a name)."""
        return tuple(name.strip() for name in (self.api_hosts or "").split(",") if name.strip())

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


def load_settings(role: str | None = None, state: Path | None = None) -> Settings:
    """Read the settings, letting ``OURO_<ROLE>_<KEY>`` override ``OURO_<KEY>`` for one worker role; ``state``
    (a ``--state`` given on the command line) beats ``OURO_STATE``."""
    overrides: dict[str, object] = {} if state is None else {"state": state}
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
