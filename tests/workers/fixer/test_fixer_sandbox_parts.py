"""The sandbox's parts without a sandbox: the bwrap argument list in both modes, the mount layout, the
agent's environment, the allow-list and the worker's proxy (over a real socket pair, to a real server)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fake_model_server import FakeModelServer

from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.fixer import AGENT_UID, AllowedHost, Mounts, Sandbox, allowed_hosts, parse_hosts
from ouroboros_gates.workers.fixer.layout import Layout, SandboxError
from ouroboros_gates.workers.fixer.proxy import ProxyServer
from ouroboros_gates.workers.fixer.sandbox import agent_environment


def _after(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def test_a_root_worker_drops_the_agent_to_an_unprivileged_uid(tmp_path: Path) -> None:
    argv = Sandbox("/usr/bin/bwrap", "/usr/bin/setpriv", uid=0).command(
        ["agent", "--flag"], Mounts(tmp_path), {"HOME": str(tmp_path)}, seccomp_fd=9
    )
    assert {"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--new-session"} <= set(argv)
    assert _after(argv, "--cap-drop") == ["ALL"] and _after(argv, "--seccomp") == ["9"]
    setpriv = argv.index("/usr/bin/setpriv")
    dropped = [
        f"--reuid={AGENT_UID}",
        f"--regid={AGENT_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]
    assert argv[setpriv:] == ["/usr/bin/setpriv", *dropped, "--", "agent", "--flag"]
    assert "--clearenv" in argv and _after(argv, "--setenv") == ["HOME"]


def test_a_worker_that_is_not_root_gives_the_agent_a_user_namespace_without_nesting(tmp_path: Path) -> None:
    argv = Sandbox("/usr/bin/bwrap", None, uid=1000).command(["agent"], Mounts(tmp_path), {}, seccomp_fd=3)
    assert "--unshare-user" in argv and "--disable-userns" in argv and "--cap-drop" not in argv
    assert argv[-2:] == ["--", "agent"]


def test_with_a_control_socket_the_bridge_starts_the_agent(tmp_path: Path) -> None:
    argv = Sandbox("/usr/bin/bwrap", None, uid=1000).command(
        ["agent"], Mounts(tmp_path), {}, seccomp_fd=3, control_fd=7
    )
    bridge = argv.index("-I")
    assert argv[bridge : bridge + 3] == ["-I", "-S", "-c"] and "def splice" in argv[bridge + 3]
    assert argv[bridge + 4 :] == ["7", "--", "agent"]


def test_parents_in_an_emptied_place_are_made_and_a_closed_host_parent_is_named(tmp_path: Path) -> None:
    layout = Layout(AGENT_UID)
    layout.tmpfs(Path("/tmp"), "1777")
    layout.bind(Path("/tmp/a/b/worktree"), writable=True)
    layout.bind(Path("/tmp/a/c"), writable=False)
    assert _after(layout.args, "--dir") == ["/tmp/a", "/tmp/a/b"]  # each once, outermost first
    closed = Path("/var/ouro-closed-test")
    closed.mkdir(mode=0o700, exist_ok=True)
    try:
        with pytest.raises(
            SandboxError, match=f"{closed}/inner: the fixer agent .* cannot reach it: {closed} is"
        ):
            Layout(AGENT_UID).bind(closed / "inner", writable=True)
    finally:
        closed.rmdir()


def test_the_agent_environment_is_an_allow_list(tmp_path: Path) -> None:
    environ = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "OURO_API_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s",
        "OURO_DATABASE_URL": "postgresql://x",
        "ANTHROPIC_API_KEY": "k",
        "LD_PRELOAD": "/x.so",
    }
    env = agent_environment(environ, tmp_path, {"OURO_FIXER_TICKET": "7"})
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": "k",
        "HOME": str(tmp_path),
        "TMPDIR": "/tmp",
        "OURO_FIXER_TICKET": "7",
    }


def test_the_allow_list_setting(tmp_path: Path) -> None:
    assert parse_hosts("api.anthropic.com:443, GitHub.com [::1]:8080 10.0.0.1") == (
        AllowedHost("api.anthropic.com", 443),
        AllowedHost("github.com", None),
        AllowedHost("::1", 8080),
        AllowedHost("10.0.0.1", None),
    )
    assert AllowedHost("github.com", None).admits("GITHUB.COM.", 443) and not AllowedHost("a", 443).admits(
        "a", 80
    )
    base = Settings(state=tmp_path)
    assert allowed_hosts(base) == (AllowedHost("api.anthropic.com", 443),)
    assert len(allowed_hosts(base.model_copy(update={"forge": "github:o/r"}))) == 3
    assert allowed_hosts(base.model_copy(update={"fixer_hosts": ""})) == ()
    for bad in ("user@host", "host:http", "host:70000", "http://host/x"):
        with pytest.raises(ConfigurationError, match=r"^OURO_FIXER_HOSTS: '"):
            allowed_hosts(base.model_copy(update={"fixer_hosts": f"ok.example {bad}"}))


def _ask(control: socket.socket, request: bytes) -> bytes:
    """What the bridge does for one connection: ask for a channel, send the request, read the answer."""
    control.sendall(b"c")
    _, fds, _, _ = socket.recv_fds(control, 1, 1)
    with socket.socket(fileno=fds[0]) as channel:
        channel.sendall(request)
        answer = b""
        while chunk := channel.recv(4096):
            answer += chunk
    return answer


def test_the_proxy_serves_allowed_hosts_only_and_records_every_attempt() -> None:
    with FakeModelServer() as model:
        port = int(model.url.rsplit(":", 1)[1])
        ours, theirs = socket.socketpair()
        proxy = ProxyServer(ours, [AllowedHost("127.0.0.1", port)]).start()
        with theirs:
            allowed = _ask(
                theirs, f"GET http://127.0.0.1:{port}/api/tags HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
            refused = _ask(theirs, b"CONNECT 127.0.0.1:6379 HTTP/1.1\r\n\r\n")
            other_port = _ask(theirs, f"GET http://127.0.0.1:{port + 1}/ HTTP/1.1\r\n\r\n".encode())
            garbage = _ask(theirs, b"\x16\x03\x01 hello\r\n\r\n")
        proxy.close()
    assert allowed.startswith(b"HTTP/1.1 200 OK") and b"fake-model" in allowed
    assert refused.startswith(b"HTTP/1.1 403 Forbidden") and b"127.0.0.1:6379 is not on" in refused
    assert other_port.startswith(b"HTTP/1.1 403") and garbage.startswith(b"HTTP/1.1 400 Bad Request")
    expected = [(f"127.0.0.1:{port}", True), ("127.0.0.1:6379", False), (f"127.0.0.1:{port + 1}", False)]
    assert [(a.target, a.allowed) for a in proxy.attempts] == [*expected, ("-", False)]
