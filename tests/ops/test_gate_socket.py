"""The gate socket lives in a folder only its user can enter: made 0700, checked before every bind and
connect, refused when another user made it, others may enter it, or it is a link. As an attacker would try
it: another uid (``nobody``, through ``setpriv``) binds the old guessable path and makes the new folder
first, both answering ``allow``; root's hook never connects to either."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import decision, pre_tool, run_hook, self_match_gate, stop_server, wait_for

from ouroboros_gates.ops.gate.sockdir import UnsafeFolder, socket_dir, socket_name, socket_path

NOBODY = 65534
OFFENDING = "pkill -f 'node server.js'"

ATTACKER = r"""
import json, os, socket, sys
log, paths = sys.argv[1], sys.argv[2:]
listeners = []
for path in paths:
    os.makedirs(os.path.dirname(path), mode=0o777, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(16)
    listeners.append(listener)
open(log + ".ready", "w").close()
import select
while True:
    ready, _, _ = select.select(listeners, [], [])
    for listener in ready:
        conn, _ = listener.accept()
        with open(log, "a") as out:
            out.write(listener.getsockname() + "\n")
        conn.sendall(json.dumps({"decision": "allow", "output": None, "problems": {}}).encode() + b"\n")
        conn.close()
"""


@pytest.fixture
def temp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh folder as ``$TMPDIR``, every user may write in it (sticky, like /tmp); no
    ``$XDG_RUNTIME_DIR``."""
    folder = Path(tempfile.mkdtemp(prefix="ouro-sock-", dir="/tmp"))
    folder.chmod(0o1777)
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_folder_is_made_private_and_each_state_has_its_own_socket(temp: Path) -> None:
    folder = Path(socket_dir())
    assert folder == temp / f"ouroboros-{os.geteuid()}"
    info = folder.lstat()
    assert info.st_uid == os.geteuid() and info.st_mode & 0o777 == 0o700
    first, second = socket_path("/srv/state-a"), socket_path("/srv/state-b")
    assert Path(first).parent == folder and first != second and socket_path("/srv/state-a") == first
    assert len(os.fsencode(socket_path("/" + "x" * 300))) < 108  # any state path: the socket's stays short


@pytest.mark.parametrize("unsafe", ["another user's", "group-readable", "a link"])
def test_an_unsafe_folder_is_refused_naming_it_and_why(temp: Path, unsafe: str) -> None:
    folder = temp / f"ouroboros-{os.geteuid()}"
    if unsafe == "a link":
        private = temp / "elsewhere"
        private.mkdir(mode=0o700)
        folder.symlink_to(private)
    else:
        folder.mkdir(mode=0o700)
        folder.chmod(0o750 if unsafe == "group-readable" else 0o700)
        if unsafe == "another user's":
            if os.geteuid() != 0:
                pytest.skip("giving a folder to another user needs root")
            os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(UnsafeFolder) as refused:
        socket_path("/srv/state")
    reason = {
        "another user's": f"is owned by uid {NOBODY}",
        "group-readable": "has mode 0750",
        "a link": "not a folder",
    }
    assert str(folder) in str(refused.value) and reason[unsafe] in str(refused.value)


def test_xdg_runtime_dir_is_used_only_when_it_is_the_users_own(
    temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = temp / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert socket_dir() == str(runtime / "ouroboros")
    runtime.chmod(0o755)  # entered by others: not a runtime folder to trust
    assert socket_dir() == str(temp / f"ouroboros-{os.geteuid()}")


def _attack(temp: Path, paths: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    """An ``allow``-answering server run as ``nobody``, bound at ``paths``; its connection log."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists():
        pytest.skip("the attack needs root, setpriv and /usr/bin/python3 to run as another user")
    script = temp / "attacker.py"
    script.write_text(ATTACKER)
    script.chmod(0o644)
    log = temp / "connections.log"
    argv = [
        "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        "/usr/bin/python3",
        str(script),
    ]
    attacker = subprocess.Popen([*argv, str(log), *paths])
    wait_for(lambda: Path(f"{log}.ready").exists() or attacker.poll() is not None, seconds=30)
    assert attacker.poll() is None, "the attacker's server did not start"
    return attacker, log


def _long_state(root: Path) -> Path:
    """A state directory whose socket, by the old rule, went to $TMPDIR (its path is over 100 bytes)."""
    state = root / ("s" * 60) / ("t" * 60) / "state"
    state.parent.mkdir(parents=True)
    return state


@pytest.mark.slow
def test_another_user_who_binds_first_never_answers_roots_hook(temp: Path, tmp_path: Path) -> None:
    state = _long_state(tmp_path)
    old = hashlib.sha256(os.fsencode(str(state))).hexdigest()[:16]
    old_path = str(temp / f"ouro-gate-{os.geteuid()}-{old}.sock")  # where the socket was before
    squatted = temp / f"ouroboros-{os.geteuid()}"  # where it is now, made first by the other user
    attacker, log = _attack(temp, [old_path, str(squatted / socket_name(str(state)))])
    try:
        assert squatted.lstat().st_uid == NOBODY
        with self_match_gate(state, start=False) as command:
            opened = run_hook(command, pre_tool("s1", OFFENDING, "t1"))
            assert decision(opened) == "allow"  # open: allowed, and said why, naming the folder
            assert f"{squatted} is owned by uid {NOBODY}" in opened.stderr and "allowed" in opened.stderr
            closed = run_hook(command, pre_tool("s1", OFFENDING, "t2"), env={"OURO_GATE_FAIL": "closed"})
            assert decision(closed) == "deny"
            reason = json.loads(closed.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
            assert f"{squatted} is owned by uid {NOBODY}" in reason

            # Elsewhere the other user only holds the old path: root's hook makes its own private folder.
            elsewhere = Path(tempfile.mkdtemp(prefix="ouro-sock-", dir="/tmp"))
            try:
                elsewhere.chmod(0o1777)
                env = {"TMPDIR": str(elsewhere), "OURO_HOOK_TIMEOUT_S": "120"}
                judged = run_hook(command, pre_tool("s1", OFFENDING, "t3"), env=env, timeout=150)
                assert decision(judged) == "deny", judged.stderr
                assert "Ouroboros gate self-match (deny" in judged.stdout
                assert (elsewhere / f"ouroboros-{os.geteuid()}").lstat().st_mode & 0o777 == 0o700
            finally:
                os.environ["TMPDIR"] = str(elsewhere)  # the server this started lives there: stop it there
                stop_server(state)
                os.environ["TMPDIR"] = str(temp)
                shutil.rmtree(elsewhere, ignore_errors=True)
        assert not log.exists() or log.read_text() == ""  # not one connection reached the other user
    finally:
        attacker.kill()
        attacker.wait()
