"""Wiring Ouroboros into Claude Code and git (``ouro hooks install``, ``ops.cli.hooks``).

    ouro hooks install [--settings PATH] [--git-dir DIR] [--state DIR]   settings snippet + git pre-push
    ouro hooks refresh [--miner NAME]…                                    recompile <state>/gates.json
    ouro hooks status                                                     the cache, and the server if up
    ouro hooks serve | stop                                               the gate server, by hand

``install`` merges one command hook per event into Claude Code's local settings
(``<repository>/.claude/settings.local.json`` by default, which git is told to ignore through
``<git-dir>/info/exclude``): the command names this machine's interpreter and state directory, so it never
goes into the committed ``.claude/settings.json`` (a settings file git tracks is refused, and the entries an
earlier install left in ``settings.json`` are taken out). The user's own hooks stay as they are, and a second
install replaces its own entries instead of adding more. The command is the environment's real interpreter
(``sys.executable``: the virtualenv's ``python``, never a pyenv shim) running ``ops/hook_script.py`` with
``-S -P`` and the state directory, so it does not depend on ``PATH`` or on the working directory and imports
nothing heavy (an entry an earlier install wrote, ``-m ops.hook``, is recognised as ours and replaced). The
git
``pre-push`` hook goes where git runs hooks (``core.hooksPath`` respected, a linked worktree's in its main
checkout's folder); it runs ``ouro pre-push`` when that command exists and passes the push through otherwise.
A plain pre-push hook that was there before is kept beside it and run first; a hook manager's (pre-commit,
husky, lefthook) or a tracked one is left alone, with how to add ``ouro pre-push`` to it.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ouroboros_gates.schemas.errors import ConfigurationError

__all__ = [
    "EVENTS",
    "HOOK_TIMEOUT_S",
    "LOCAL_SETTINGS",
    "PRE_PUSH_MARK",
    "SHARED_SETTINGS",
    "hook_command",
    "hooks_folder",
    "install_pre_push",
    "install_settings",
    "keep_out_of_git",
    "merge_settings",
    "pre_push_script",
    "remove_ours",
]

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
)
"""The Claude Code events the hook records (PreToolUse is also decided)."""

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
HOOK_TIMEOUT_S = 10
"""Claude Code's own limit for the command (the hook allows on its own after 5 s)."""

LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
"""Claude Code's settings of this checkout on this machine: where the hook command goes."""
SHARED_SETTINGS = Path(".claude") / "settings.json"
"""Claude Code's settings a team commits: never given a command that names this machine's paths."""

PRE_PUSH_MARK = "# ouroboros pre-push hook (ouro hooks install)"
_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook_script.py")
_OURS = ("/ops/hook_script.py", "-m ops.hook")
"""What marks a command as ours: the script, or the module an earlier install ran."""


def _interpreter() -> str:
    """The environment's own interpreter, as invoked (a venv's python must not be resolved past its link)."""
    executable = sys.executable
    if not executable or "/shims/" in executable:
        raise ConfigurationError(
            f"{executable!r} is a shim or unknown: run `ouro hooks install` from the virtualenv"
        )
    return os.path.abspath(executable)


def hook_command(state: Path) -> str:
    """The command line Claude Code runs for every event."""
    # -P: the script's folder stays off sys.path; -S: no site (see ops/hook_script.py).
    return f"{shlex.quote(_interpreter())} -S -P {shlex.quote(_SCRIPT)} --state {shlex.quote(str(state))}"


def _is_ours(entry: Any) -> bool:
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    return isinstance(hooks, list) and any(_is_our_command(h) for h in hooks)


def _is_our_command(hook: Any) -> bool:
    """Whether one hook of an entry is a command that runs Ouroboros's hook."""
    return isinstance(hook, dict) and any(mark in str(hook.get("command", "")) for mark in _OURS)


def merge_settings(settings: dict[str, Any], command: str, timeout: int = HOOK_TIMEOUT_S) -> dict[str, Any]:
    """``settings`` with one Ouroboros command hook per event: other hooks kept, ours replaced in place."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigurationError("the settings' `hooks` is not a JSON object; fix it by hand first")
    for event in EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigurationError(f"the settings' hooks.{event} is not a list; fix it by hand first")
        hooks[event] = _with_ours(entries, _our_entry(event, command, timeout))
    return settings


def _our_entry(event: str, command: str, timeout: int) -> dict[str, Any]:
    """Our command hook for ``event`` (a tool event's entry matches every tool)."""
    ours: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if event in TOOL_EVENTS:
        ours = {"matcher": "*", **ours}
    return ours


def _with_ours(entries: list[Any], ours: dict[str, Any]) -> list[Any]:
    """The other entries kept, and ours where the first of ours was (at the end when there was none)."""
    kept = [entry for entry in entries if not _is_ours(entry)]
    at = next((i for i, entry in enumerate(entries) if _is_ours(entry)), len(kept))
    return [*kept[:at], ours, *kept[at:]]


def remove_ours(settings: dict[str, Any]) -> bool:
    """Take every Ouroboros entry out of ``settings`` (an event left with none is removed); whether any
    was."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    changed = False
    for event, entries in list(hooks.items()):
        if _has_ours(entries):
            _drop_ours(hooks, event, entries)
            changed = True
    if changed and not hooks:
        del settings["hooks"]
    return changed


def _has_ours(entries: Any) -> bool:
    """Whether an event's entries (a list, unless the file was edited by hand) hold one of ours."""
    return isinstance(entries, list) and any(_is_ours(entry) for entry in entries)


def _drop_ours(hooks: dict[str, Any], event: str, entries: list[Any]) -> None:
    """The event's entries without Ouroboros's; the event removed when none is left."""
    kept = [entry for entry in entries if not _is_ours(entry)]
    if kept:
        hooks[event] = kept
    else:
        del hooks[event]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(partial, path)


def _read_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        loaded = json.loads(path.read_text() or "{}")
    except ValueError as exc:
        raise ConfigurationError(f"{path}: not valid JSON ({exc}); nothing was changed") from exc
    if not isinstance(loaded, dict):
        raise ConfigurationError(f"{path}: not a JSON object; nothing was changed")
    return loaded


def install_settings(path: Path, state: Path) -> None:
    """Merge the Ouroboros hooks into the settings file at ``path`` (created when absent)."""
    _write_json(path, merge_settings(_read_settings(path), hook_command(state)))


def uninstall_settings(path: Path) -> bool:
    """Take the Ouroboros hooks out of the settings file at ``path``; whether there were any."""
    current = _read_settings(path)
    if not remove_ours(current):
        return False
    _write_json(path, current)
    return True


def keep_out_of_git(path: Path) -> str:
    """Make sure git never picks up the settings file ``path``: one git tracks is refused (its command would
    name this machine's paths for everyone); one it would pick up gets a line in ``<git-dir>/info/exclude``.
    What was done, in words ("" outside a repository)."""
    from ouroboros_gates.forge.git import git

    found = _in_repository(path)
    if found is None:
        return ""
    top, relative = found
    if (
        git("ls-files", "--error-unmatch", "--", relative, cwd=top, check=False, user_config=True).returncode
        == 0
    ):
        raise ConfigurationError(
            f"{path}: git tracks this file; the hook command names this machine's paths, so it goes to "
            f"{LOCAL_SETTINGS} (the default) or ~/.claude/settings.json, never to a committed file"
        )
    if git("check-ignore", "-q", "--", relative, cwd=top, check=False, user_config=True).returncode == 0:
        return f"{relative} is ignored by git"
    return _exclude(top, relative)


def _in_repository(path: Path) -> tuple[Path, str] | None:
    """The top of the git work tree ``path`` lies in, and its path there (None outside one)."""
    from ouroboros_gates.forge.git import git_text
    from ouroboros_gates.schemas.errors import GitError

    folder = path.parent if path.parent.is_dir() else Path.cwd()
    try:
        top = Path(git_text("rev-parse", "--show-toplevel", cwd=folder, user_config=True))
    except GitError:
        return None
    if not path.resolve().is_relative_to(top.resolve()):
        return None
    return top, path.resolve().relative_to(top.resolve()).as_posix()


def _exclude(top: Path, relative: str) -> str:
    """Add ``/relative`` to the repository's ``info/exclude``; what was done, in words."""
    from ouroboros_gates.forge.git import git_text

    exclude = Path(git_text("rev-parse", "--git-path", "info/exclude", cwd=top, user_config=True))
    exclude = exclude if exclude.is_absolute() else top / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    before = exclude.read_text() if exclude.exists() else ""
    exclude.write_text(before + ("" if before.endswith("\n") or not before else "\n") + f"/{relative}\n")
    return f"{relative} added to {exclude}"


def pre_push_script(ouro: str) -> str:
    """The git pre-push hook: the previous hook first, then ``ouro pre-push`` when this ouro has that command
    (asked of its command table, which loads nothing: a push pays for one start of the decider, not two)."""
    return f"""#!/bin/sh
{PRE_PUSH_MARK}
# Runs the hook that was here before (pre-push.local), then `ouro pre-push` (the decider) when this
# ouro has that command; a push passes through when it does not.
input=$(cat)
here=$(dirname "$0")
if [ -x "$here/pre-push.local" ]; then
  printf '%s\\n' "$input" | "$here/pre-push.local" "$@" || exit $?
fi
ouro={shlex.quote(ouro)}
if [ ! -x "$ouro" ]; then
  command -v ouro >/dev/null 2>&1 || exit 0
  ouro=$(command -v ouro)
fi
"$ouro" --help 2>/dev/null | grep -q '^  pre-push ' || exit 0
printf '%s\\n' "$input" | "$ouro" pre-push "$@"
"""


def hooks_folder(git_dir: Path | None = None, cwd: Path | None = None) -> Path:
    """The folder git runs the repository's hooks from: ``core.hooksPath`` when it is set (husky, lefthook,
    a shared folder; a relative one is relative to the work tree's top), else the ``hooks`` folder of the
    common git directory (a linked worktree runs its main checkout's hooks). The repository is the one
    ``cwd`` (default: the working directory) lies in, or the one whose git directory is ``git_dir``."""
    from ouroboros_gates.forge.git import git_text
    from ouroboros_gates.schemas.errors import GitError

    where = ["--git-dir", str(git_dir)] if git_dir is not None else []
    cwd = _git_cwd(git_dir, cwd)
    try:
        found = git_text(
            *where,
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "hooks",
            cwd=cwd,
            user_config=True,
            hooks_as_configured=True,
        )
    except GitError as exc:
        raise ConfigurationError(f"{git_dir or cwd or Path.cwd()}: not a git repository ({exc})") from exc
    return Path(found)


def _git_cwd(git_dir: Path | None, cwd: Path | None) -> Path | None:
    """Where git runs: ``cwd``, else the work tree of ``git_dir`` when one is given (git takes the working
    directory as the work tree's top)."""
    if git_dir is not None and cwd is None:
        return git_dir.parent if git_dir.name == ".git" else git_dir
    return cwd


_MANAGERS = (
    (
        "pre-commit",
        "File generated by pre-commit",
        "add the ouro-pre-push hook to .pre-commit-config.yaml (docs/push-gate.md) and run "
        "`pre-commit install --hook-type pre-push`",
    ),
    (
        "husky",
        "husky",
        'add the line `ouro pre-push "$@"` to .husky/pre-push (husky passes the refs on stdin)',
    ),
    (
        "lefthook",
        "lefthook",
        "add `ouro: {run: ouro pre-push, use_stdin: true}` under `pre-push: commands:` in lefthook.yml",
    ),
)
"""Hook managers whose hook must stay theirs: what marks their script, and how to add ``ouro pre-push``."""


def _manager(hook: Path, text: str) -> tuple[str, str] | None:
    """The hook manager that wrote ``hook`` (husky 9's stub sources ``h`` beside it), with its advice."""
    husky_stub = _is_husky_stub(hook, text)
    for name, mark, advice in _MANAGERS:
        if mark in text or (name == "husky" and husky_stub):
            return name, advice
    return None


def _is_husky_stub(hook: Path, text: str) -> bool:
    """Whether the hook is husky 9's stub: it sources the ``h`` script beside it."""
    return (hook.parent / "h").is_file() and '/h"' in text


def _tracked(hook: Path) -> bool:
    """Whether the hook is a file the repository tracks (a shared hook folder committed with the code)."""
    from ouroboros_gates.forge.git import git

    done = git("ls-files", "--error-unmatch", hook.name, cwd=hook.parent, check=False, user_config=True)
    return done.returncode == 0


def install_pre_push(hooks: Path) -> Path:
    """Write ``<hooks>/pre-push`` (``hooks`` as ``hooks_folder`` finds it). A foreign hook already there is
    chained: moved to ``pre-push.local`` and run first. A hook manager's hook (pre-commit, husky, lefthook)
    or a hook the repository tracks is left alone: ``ConfigurationError`` says how to add ours to it."""
    hooks.mkdir(parents=True, exist_ok=True)
    target = hooks / "pre-push"
    text = target.read_text(errors="replace") if target.exists() else ""
    if target.exists() and PRE_PUSH_MARK not in text:
        _chain(target, text)
    ouro = str(Path(_interpreter()).parent / "ouro")
    target.write_text(pre_push_script(ouro))
    target.chmod(0o755)
    return target


def _chain(target: Path, text: str) -> None:
    """Move a foreign hook to ``pre-push.local``, which ours runs first; ``ConfigurationError`` for a hook
    manager's hook, a tracked hook, or a ``pre-push.local`` already there."""
    refuse = f"{target} is not ours and was left as it is"
    manager = _manager(target, text)
    if manager is not None:
        raise ConfigurationError(f"{refuse}: {manager[0]} runs the repository's hooks; {manager[1]}")
    if _tracked(target):
        raise ConfigurationError(
            f'{refuse}: the repository tracks it; add `ouro pre-push "$@"` to it, before anything else '
            "reads "
            "stdin (the refs come there)"
        )
    local = target.parent / "pre-push.local"
    if local.exists():
        raise ConfigurationError(f"{target} and {local} both exist and neither is ours; merge them by hand")
    target.rename(local)
