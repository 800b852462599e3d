"""Putting an engine together from the settings: the program lookup (docs/decider.md, "Program lookup"), the
memory, the metered chat client and the embedder.

Lookup: ``OURO_DECIDER_PROGRAM`` (a path), then the store's adopted program, then the packaged one under
``ruleset/programs/`` (the LM program when a chat model is configured, else the memory vote), then none.
"""

from __future__ import annotations

from dataclasses import dataclass

from ouroboros_gates.decider.decide import Engine
from ouroboros_gates.decider.embed import CachedEmbedder, Embedder, HashingEmbedder, ModelEmbedder
from ouroboros_gates.decider.features import FEATURES, SCHEMA_VERSION, feature_set_digest, validate_record
from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.memory import Memory, MemoryStore
from ouroboros_gates.decider.program import Program
from ouroboros_gates.decider.repos import normalise_repo
from ouroboros_gates.decider.retrieve import Boundary, columns_from_specs
from ouroboros_gates.decider.seed import corpus_memory, seed_digest
from ouroboros_gates.llm import (
    ChatClient,
    EmbeddingClient,
    Endpoint,
    LlmError,
    MeteredClient,
    ResponseCache,
    endpoint_from_settings,
    find_manifest,
    load_manifest,
)
from ouroboros_gates.schemas import Profile
from ouroboros_gates.schemas.settings import Settings

__all__ = [
    "PROGRAMS_DIR",
    "Lookup",
    "build_engine",
    "find_program",
    "packaged_program",
    "repo_group",
    "shipped_digests",
]

PROGRAMS_DIR = RULESET / "programs"
LOCAL_EMBEDDER = "local/hashed-ngrams"


@dataclass(frozen=True)
class Lookup:
    """The program found, where it came from, and a note for the report."""

    program: Program | None
    source: str  # setting | store | packaged | none
    note: str = ""

    @property
    def kind(self) -> str | None:
        """The kind of the program found (``llm-program``, ``memory-vote``), None when none was."""
        return self.program.kind if self.program is not None else None


def packaged_program(kind: str, profile: str = "static") -> Program | None:
    """``ruleset/programs/<kind>-<profile>.json``, or None when not shipped."""
    path = PROGRAMS_DIR / f"{kind}-{profile}.json"
    return Program.load(path) if path.exists() else None


def shipped_digests() -> dict[str, str]:
    """What the package decides with, by name: each packaged program's id and the shipped memory's digest."""
    programs = {
        f"program {path.stem}": Program.load(path).program_id for path in sorted(PROGRAMS_DIR.glob("*.json"))
    }
    return {**programs, "memory": seed_digest()}


def find_program(
    settings: Settings, store: MemoryStore | None, chat: bool, profile: str = "static"
) -> Lookup:
    """The program in lookup order (docs/decider.md, "Program lookup"); an LM program without a chat model
    gives way to the vote."""
    found = _looked_up(settings, store, chat, profile)
    if found.kind == "llm-program" and not chat:
        vote = packaged_program("memory-vote", profile)
        return Lookup(vote, "packaged" if vote else "none", "memory-vote program (no chat model configured)")
    if found.kind == "memory-vote":
        return Lookup(found.program, found.source, "memory-vote program (no chat model configured)")
    return found


def _looked_up(settings: Settings, store: MemoryStore | None, chat: bool, profile: str) -> Lookup:
    """The first program of the lookup order: the setting's, the store's adopted one, the packaged one."""
    if settings.decider_program is not None:
        return Lookup(Program.load(settings.decider_program), "setting")
    if store is not None and (body := store.adopted(profile)) is not None:
        return Lookup(Program.from_json(body, f"adopted {profile} program"), "store")
    program = packaged_program("llm-program" if chat else "memory-vote", profile)
    return Lookup(program, "packaged" if program else "none")


def repo_group(repo_key: str) -> str:
    """The normalised repository name a corpus group would have (lower-cased ``owner/name``)."""
    return normalise_repo(repo_key)


def _embedder(settings: Settings, store: MemoryStore | None) -> Embedder | None:
    model = settings.embed_model
    if not model:
        return None
    if model.startswith(LOCAL_EMBEDDER):
        inner: Embedder = _local_embedder(model)
    else:
        endpoint = endpoint_from_settings(settings, embed=True)
        assert endpoint is not None
        client = EmbeddingClient(
            endpoint, cache_dir=settings.state_dir / "embeddings", manifest=find_manifest(model)
        )
        inner = ModelEmbedder(model, client.embed)
    return CachedEmbedder(inner, store)


def _local_embedder(model: str) -> HashingEmbedder:
    """The local hashing embedder a model name asks for (its dimensions after the last ``-``, else 256)."""
    dims = model.rsplit("-", 1)[-1]
    return HashingEmbedder(int(dims) if dims.isdigit() else 256)


def build_engine(
    settings: Settings,
    repo_key: str,
    *,
    store: MemoryStore | None,
    memory: Memory | None = None,
    extra: Memory | None = None,
) -> tuple[Engine, Lookup]:
    """The engine for one push or scan of ``repo_key`` (its own group excluded from retrieval)."""
    endpoint = endpoint_from_settings(settings)
    lookup = find_program(settings, store, chat=endpoint is not None)
    program = lookup.program
    corpus = _corpus(store, memory, extra)
    embedder = _embedded(corpus, _embedder(settings, store))
    engine = Engine(
        program=program,
        memory=corpus,
        columns=columns_from_specs(FEATURES, profile=Profile.STATIC),
        embedder=embedder,
        boundary=Boundary("deployment"),
        repo_group=repo_group(repo_key),
        validate=validate_record,
    )
    reason = _unusable(program)
    if reason is not None:
        engine.reason = reason
    elif lookup.kind == "llm-program" and endpoint is not None:
        _connect(engine, settings, endpoint)
    return engine, lookup


def _corpus(store: MemoryStore | None, memory: Memory | None, extra: Memory | None) -> Memory:
    """The memory retrieval reads: the one given, else the store's or the shipped one, with ``extra`` (the
    user's own examples) beside it."""
    corpus = memory if memory is not None else corpus_memory(store)
    if extra is not None:
        corpus = corpus.merged(extra)
    return corpus


def _embedded(corpus: Memory, embedder: Embedder | None) -> Embedder | None:
    """The embedder once the memory is embedded with it; None when there is none or it fails."""
    if embedder is None:
        return None
    try:
        corpus.embed(embedder)
    except LlmError:  # the memory stays without vectors: retrieval runs signals_only and says so
        return None
    return embedder


def _unusable(program: Program | None) -> str | None:
    """Why the engine cannot run a program, or None."""
    if program is None:
        return "no adopted program"
    if (
        program.feature_set_digest not in (None, feature_set_digest())
        or program.schema_version != SCHEMA_VERSION
    ):
        return "program built for another feature set"
    return None


def _connect(engine: Engine, settings: Settings, endpoint: Endpoint) -> None:
    """The engine's chat model: metered against the push's ceilings, its answers cached."""
    manifest = find_manifest(settings.model or "") or load_manifest("local")
    client = MeteredClient(
        ChatClient(endpoint),
        manifest,
        usd_ceiling=settings.decider_push_usd,
        call_ceiling=settings.decider_push_calls,
        cache=ResponseCache(settings.state_dir / "responses"),
    )
    engine.client, engine.model = client, endpoint.model
    engine.spent = lambda: (client.spent_usd, client.calls)
