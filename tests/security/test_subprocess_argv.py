"""Subprocesses run with argument lists, never a shell string built from input: shell metacharacters in a
branch name, revision or path reach git as one inert argument, and no module of the product spawns a shell."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ouroboros_gates.forge import ForgeError, LocalForge, NotFoundError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PACKAGES = ("schemas", "events", "miners", "workers", "ops")


def _hostile(sentinel: Path) -> list[str]:
    """Names a shell would run a command from; each would create ``sentinel``."""
    return [
        f"main; touch {sentinel}",
        f"main && touch {sentinel}",
        f"main | touch {sentinel}",
        f"$(touch {sentinel})",
        f"`touch {sentinel}`",
        f"main\ntouch {sentinel}",
        f"main' ; touch '{sentinel}",
    ]


@pytest.fixture
def forge(tmp_path: Path) -> LocalForge:
    shutil.copytree(EXAMPLES / "forge", tmp_path / "forge")
    return LocalForge(
        tmp_path / "forge",
        EXAMPLES / "repo.bundle",
        cache_dir=tmp_path / "cache",
        writes_dir=tmp_path / "writes",
    )


def _main_tip(forge: LocalForge) -> str:
    argv = ["git", "-C", str(forge.git_dir()), "rev-parse", "refs/heads/main"]
    return subprocess.run(argv, capture_output=True, check=True, text=True).stdout.strip()


def test_a_branch_name_with_shell_metacharacters_is_one_inert_argument(
    forge: LocalForge, tmp_path: Path
) -> None:
    sentinel = tmp_path / "pwned"
    tip = _main_tip(forge)
    template = json.loads((tmp_path / "forge" / "pulls" / "55.json").read_text())
    for number, base in enumerate(_hostile(sentinel), start=900):
        document = {**template, "number": number, "state": "open", "base": base, "head_sha": tip}
        (tmp_path / "forge" / "pulls" / f"{number}.json").write_text(json.dumps(document))
        with pytest.raises(ForgeError):
            forge.merge(number, tip, "merge")  # git finds no branch of that name; nothing else happens
        assert not sentinel.exists(), base
    assert _main_tip(forge) == tip  # no ref moved


def test_revisions_and_paths_with_metacharacters_never_reach_a_shell(
    forge: LocalForge, tmp_path: Path
) -> None:
    sentinel = tmp_path / "pwned"
    for hostile in _hostile(sentinel):
        assert forge.has_commit(hostile) is False
        with pytest.raises((NotFoundError, ForgeError)):
            forge.file_at("HEAD", hostile)
        with pytest.raises((NotFoundError, ForgeError)):
            forge.file_at(hostile.replace(":", ""), "README.md")
        assert not sentinel.exists(), hostile
    for option in ("--output=/tmp/x", "-c", "--upload-pack=touch x"):
        with pytest.raises(ForgeError, match="refused"):
            forge.file_at(option, "README.md")


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else ""


def test_no_module_spawns_a_shell_or_passes_a_command_string() -> None:
    spawners = {
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "asyncio.create_subprocess_exec",
    }
    shells = {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "asyncio.create_subprocess_shell",
        "os.execl",
        "os.execlp",
        "os.spawnl",
    }
    offences, spawns = [], 0
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for call in _calls(ast.parse(path.read_text(), str(path))):
                where = f"{path.relative_to(ROOT)}:{call.lineno}"
                name = _name(call)
                if name in shells:
                    offences.append(f"{where}: {name} runs a shell")
                if name not in spawners:
                    continue
                spawns += 1
                if any(
                    k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                    for k in call.keywords
                ):
                    offences.append(f"{where}: shell= is set")
                first = call.args[0] if call.args else None
                if isinstance(first, ast.Constant | ast.JoinedStr | ast.BinOp):
                    offences.append(f"{where}: the command is a string, not an argument list")
    assert offences == []
    assert spawns >= 3  # the scan sees the product's subprocess calls (git, agent CLI, workers)
