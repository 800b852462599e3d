"""The generic export: generic-scope findings of every tenant, re-keyed, facts and spans only, gated.

A tenant-scope finding never appears. An exported finding carries no tenant, run id or subject: its
instance is an HMAC of (tenant, run, subject) under this installation's export key (``<state>/export.key``,
made by ``export_key`` when the API starts; a read only reads it, ``read_export_key``), so exports of the
same finding agree while nobody outside can link one to a run. Every text argument is passed through the
operator-identifier gate (``ops.redact``) and spans keep only the file's base name; an export that still
holds an identifier is refused rather than served.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ouroboros_gates.ops.redact import Gate, local_names
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["export_findings", "export_key", "export_one", "gate_for", "gate_row", "read_export_key"]

_KEY_FILE = "export.key"


def export_key(settings: Settings) -> bytes:
    """This installation's re-keying secret, created (mode 0600) on first use."""
    path = settings.state_dir / _KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(32))
    return path.read_bytes()


def read_export_key(settings: Settings) -> bytes | None:
    """The re-keying secret if it exists (None if not): what a read uses, so that a read never writes."""
    try:
        return (settings.state_dir / _KEY_FILE).read_bytes()
    except FileNotFoundError:
        return None


def gate_for(settings: Settings, tenants: Iterable[str] = ()) -> Gate:
    """The gate for this server: the tenants' names and the operator's own user and host names."""
    return Gate([settings.tenant, *tenants, *local_names()])


def _token(key: bytes, *parts: str) -> str:
    return hmac.new(key, "\x1f".join(parts).encode(), hashlib.sha256).hexdigest()[:32]


def _arg(arg: Mapping[str, Any], gate: Gate, keyed: Mapping[str, str]) -> dict[str, Any]:
    if "text" not in arg:
        return {"number": arg["number"]}
    text = str(arg["text"])
    return {"text": keyed.get(text) or gate.scrub(text)}


def _fact(fact: Mapping[str, Any], gate: Gate, keyed: Mapping[str, str]) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "predicate": fact["predicate"],
        "args": [_arg(a, gate, keyed) for a in fact.get("args", [])],
    }
    span = fact.get("span")
    if span:
        shown["span"] = {"file": gate.scrub(Path(str(span["file"])).name), "line": span["line"]}
    return shown


def export_one(row: Mapping[str, Any], key: bytes, gate: Gate) -> dict[str, Any]:
    """One finding row of the ledger as exported: re-keyed, gated, facts and spans only."""
    subject = row["subject"] if isinstance(row["subject"], list) else orjson.loads(row["subject"])
    tenant, run = str(row["tenant"]), str(row["run"])
    keyed = _keyed(key, tenant, run, subject)
    return {
        "instance": _token(key, tenant, run, orjson.dumps(subject).decode()),
        "miner": row["miner"],
        "rule": row["rule"],
        "severity": row["severity"],
        "subject": [_arg(a, gate, keyed) for a in subject],
        "proof": [_fact(f, gate, keyed) for f in row["proof"]],
    }


def _keyed(key: bytes, tenant: str, run: str, subject: list[dict[str, Any]]) -> dict[str, str]:
    """The opaque token of the run id and of every subject value, which replaces them wherever a fact names
    them."""
    keyed = {run: "run:" + _token(key, tenant, "run", run)}
    for arg in subject:
        if "text" in arg and arg["text"] not in keyed:
            keyed[str(arg["text"])] = "subject:" + _token(key, tenant, "subject", str(arg["text"]))
    return keyed


def gate_row(row: dict[str, Any], gate: Gate) -> None:
    """Scrub another tenant's generic finding in place: its subject and proof texts pass the gate."""
    row["subject"] = [_arg(a, gate, {}) for a in row["subject"]]
    row["proof"] = [{**f, "args": [_arg(a, gate, {}) for a in f.get("args", [])]} for f in row["proof"]]


def export_findings(rows: Iterable[Mapping[str, Any]], key: bytes, gate: Gate) -> list[dict[str, Any]]:
    """The generic rows exported; a tenant-scope row is never among them, and nothing leaves ungated."""
    exported = [export_one(row, key, gate) for row in rows if row["scope"] == "generic"]
    leaked = gate.find(orjson.dumps(exported).decode())
    if leaked:
        kinds = ", ".join(sorted({i.kind for i in leaked}))
        raise OuroError(f"export refused: the operator-identifier gate still finds {len(leaked)} ({kinds})")
    return exported
