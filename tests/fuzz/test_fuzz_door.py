"""Fuzzing the two doors input comes in by: the task shell's validation (every message type) and the
hook's stdin. A bad message becomes one ``MessageRejected`` naming each invalid field and the next
message is still handled; bad stdin is one warning line and the call is allowed; nothing raises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.ops import hook
from ouroboros_gates.schemas import MESSAGE_TYPES, MessageRejected, Probe, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import shell
from ouroboros_gates.workers.fleet import probe

ROOT = Path(__file__).resolve().parents[2]
QUICK = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def _payloads(kind: type[Any]) -> st.SearchStrategy[Any]:
    """Objects with the type's own field names (and others) holding anything, or not objects at all."""
    names = st.sampled_from(sorted(kind.model_fields)) | st.text(max_size=6)
    return st.dictionaries(names, values, max_size=8) | values


def _known(field: str, kind: type[Any], payload: Any) -> bool:
    """A field of the type, a key the payload itself carries (an unknown field is named as sent), or the
    payload as a whole."""
    keys = {str(k) for k in payload} if isinstance(payload, dict) else set()
    return field == "(message)" or field.split(".", 1)[0] in kind.model_fields or field in keys


@QUICK
@given(data=st.data(), name=st.sampled_from(sorted(MESSAGE_TYPES)))
def test_every_invalid_message_names_each_invalid_field(data: st.DataObject, name: str) -> None:
    kind = MESSAGE_TYPES[name]
    payload = data.draw(_payloads(kind))
    try:
        kind.model_validate(payload)
    except ValidationError as exc:
        event = MessageRejected.from_validation_error(kind.TASK, None, exc)
        assert event.errors and all(e.field and e.message for e in event.errors)
        assert all(_known(e.field, kind, payload) for e in event.errors), [e.field for e in event.errors]


@pytest.fixture
def door(tmp_path: Path) -> Any:
    """The shell's own ``run_message`` on a SQLite log, with a stand-in for the Celery task it runs under."""
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'door.sqlite'}")
    ensure_schema(store.engine)
    ctx = shell.Context(Settings(state=tmp_path / "state"), store, "fuzz")
    shell._contexts[os.getpid()] = ctx
    task = SimpleNamespace(request=SimpleNamespace(retries=0))
    yield lambda payload: shell.run_message(task, Probe, probe.handler, payload), store
    shell.reset_context()
    store.close()


@QUICK
@given(bad=st.lists(_payloads(Probe), min_size=1, max_size=5))
def test_bad_messages_are_recorded_and_the_next_one_is_still_handled(door: Any, bad: list[Any]) -> None:
    run, store = door
    for payload in bad:
        assert run(payload) in ("rejected", "appended", "duplicate")  # never raises
    marker = Probe(message_id=content_id("fuzz-door", repr(bad)), probe="after-the-bad-ones")
    assert run(marker.to_json_dict()) in ("appended", "duplicate")
    assert store.is_handled(Probe.TASK, marker.message_id)
    rejected = [e for e in store.read(limit=100_000) if e.type == "MessageRejected"]
    assert all(error["field"] for event in rejected for error in event.payload["errors"])


@QUICK
@given(data=st.binary(max_size=300) | values.map(lambda v: json.dumps(v).encode()))
def test_hook_stdin_that_is_not_a_payload_is_one_warning_and_allowed(
    data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        payload = json.loads(data)
    except ValueError:
        payload = None
    is_payload = isinstance(payload, dict) and isinstance(payload.get("hook_event_name"), str)
    assert hook.run(data, str(tmp_path / "state"), deadline=0.0) is None or is_payload
    warned = capsys.readouterr().err.strip().splitlines()
    if not is_payload:
        assert len(warned) == 1 and warned[0].startswith("ouro hook: stdin is not")


_QUIET_EVENTS = st.sampled_from(
    ["PostToolUse", "UserPromptSubmit", "Notification", "SubagentStop", "PreCompact"]
)


@QUICK
@given(
    event=_QUIET_EVENTS
    | st.text(max_size=12).filter(lambda t: t not in ("PreToolUse", "SessionStart", "Stop", "SessionEnd")),
    extra=st.dictionaries(
        st.sampled_from(
            ["session_id", "tool_name", "tool_input", "cwd", "transcript_path", "tool_response", "prompt"]
        )
        | st.text(max_size=6),
        values,
        max_size=6,
    ),
)
def test_hook_payloads_of_any_shape_are_recorded_under_the_state_dir(
    event: str, extra: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    state = tmp_path_factory.mktemp("hook-state")
    payload = {**extra, "hook_event_name": event}
    assert hook.run(json.dumps(payload).encode(), str(state), deadline=0.0) is None
    written = [p for p in state.rglob("*") if p.is_file()]
    assert written and all(p.resolve().is_relative_to(state.resolve()) for p in written)


def test_the_hook_process_allows_the_call_on_garbage_stdin(tmp_path: Path) -> None:
    env = {**os.environ, "OURO_STATE": str(tmp_path / "state"), "OURO_HOOK_AUTOFLUSH": "0"}
    for stdin in (b"", b"\xff\xfe garbage", b"[1, 2", b'{"hook_event_name": 7}', b'"just a string"'):
        done = subprocess.run(
            [sys.executable, "-P", "-m", "ouroboros_gates.ops.hook"],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0 and done.stdout == b""
        assert done.stderr.decode().count("\n") == 1 and done.stderr.startswith(b"ouro hook: ")
