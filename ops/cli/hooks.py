"""``ouro hook`` and ``ouro hooks``: Claude Code's hook command, and wiring it into Claude Code and git.

    ouro hooks install [--settings PATH] [--git-dir DIR] [--state DIR]   local settings + git pre-push
    ouro hooks refresh [--miner NAME]…                                    recompile <state>/gates.json
    ouro hooks status                                                     the cache, and the server if up
    ouro hooks serve | stop                                               the gate server, by hand

What ``install`` writes is ``ops.hooks_install``'s; the hook itself is ``ops.hook``. The module imports only
typer: ``ouro hook`` runs on every tool call of the agent.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["hook", "hooks_app"]

hooks_app = typer.Typer(no_args_is_help=True, help="Claude Code and git hooks; the gate cache and server.")


def hook(
    flush: Annotated[
        bool, typer.Option("--flush", help="Hand the spooled runs to the fleet (IngestRun).")
    ] = False,
    state: Annotated[str | None, typer.Option(help="State directory (default OURO_STATE).")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds after which the call is allowed.")] = None,
) -> None:
    """Claude Code's hook: the payload on stdin; records it, spools it, decides PreToolUse (see
    ops/hook.py)."""
    from ouroboros_gates.ops.hook import main as hook_main

    argv = ["--flush"] if flush else []
    argv += ["--state", state] if state else []
    argv += ["--timeout", str(timeout)] if timeout is not None else []
    raise typer.Exit(hook_main(argv))


def _hooks_folder(git_dir: Path | None) -> Path | None:
    """Where git runs this repository's hooks (``core.hooksPath`` respected); None outside a repository."""
    from ouroboros_gates.ops.hooks_install import hooks_folder
    from ouroboros_gates.schemas.errors import ConfigurationError

    try:
        return hooks_folder(git_dir)
    except ConfigurationError:
        if git_dir is not None:
            raise  # a git directory given that is none: say so
        return None


def _state(given: Path | None) -> Path:
    from ouroboros_gates.schemas.settings import load_settings

    return (given or load_settings().state_dir).expanduser().absolute()


StateOption = Annotated[Path | None, typer.Option("--state", help="State directory (default OURO_STATE).")]


def _remove_shared(shared: Path, target: Path) -> None:
    """Take out the hook entries an earlier install wrote to the shared settings file (when it is not the
    target), saying so."""
    from ouroboros_gates.ops.hooks_install import uninstall_settings

    if shared.resolve() != target.resolve() and uninstall_settings(shared):
        typer.echo(f"removed the hook entries an earlier install wrote to {shared} (machine-specific paths)")


@hooks_app.command("install")
def install(
    settings: Annotated[
        Path | None,
        typer.Option(
            help="Claude Code settings file (default: the repository's .claude/settings.local.json)."
        ),
    ] = None,
    git_dir: Annotated[Path | None, typer.Option(help="Git directory (default: this repository's).")] = None,
    state: StateOption = None,
    refresh_gates: Annotated[
        bool, typer.Option("--refresh/--no-refresh", help="Compile gates.json now.")
    ] = True,
) -> None:
    """Merge the hook into Claude Code's local settings (kept out of git) and install the git pre-push
    hook."""
    from ouroboros_gates.ops.hooks_install import (
        EVENTS,
        LOCAL_SETTINGS,
        SHARED_SETTINGS,
        hook_command,
        install_settings,
        keep_out_of_git,
    )
    from ouroboros_gates.schemas.statedir import project_root

    root = Path(project_root())
    target = settings or root / LOCAL_SETTINGS
    where = _state(state)
    where.mkdir(parents=True, exist_ok=True)
    ignored = keep_out_of_git(target)  # before anything is written: a tracked file is refused
    install_settings(target, where)
    typer.echo(f"hooks for {', '.join(EVENTS)} in {target}: {hook_command(where)}")
    if ignored:
        typer.echo(ignored)
    _remove_shared(root / SHARED_SETTINGS, target)
    typer.echo(f"state (recorded payloads, secrets redacted): {where}")
    refused = _install_git_hook(git_dir)
    if refresh_gates:
        refresh(miner=None, state=where)
    if refused:
        raise typer.Exit(1)


def _install_git_hook(git_dir: Path | None) -> bool:
    """Install the pre-push hook where git runs it; True when it was refused (the reason on stderr)."""
    from ouroboros_gates.ops.hooks_install import install_pre_push
    from ouroboros_gates.schemas.errors import ConfigurationError

    folder = _hooks_folder(git_dir)
    if folder is None:
        typer.echo("no git repository here: pre-push hook not installed (give --git-dir)")
        return False
    try:
        typer.echo(f"pre-push hook: {install_pre_push(folder)} (where git runs this repository's hooks)")
    except ConfigurationError as exc:
        typer.echo(f"pre-push hook not installed: {exc}", err=True)
        return True
    return False


@hooks_app.command("refresh")
def refresh(
    miner: Annotated[
        list[str] | None, typer.Option("--miner", help="Keep only these miners (repeatable).")
    ] = None,
    state: StateOption = None,
) -> None:
    """Judge every miner and write the accepted ones to <state>/gates.json (binds from the next call)."""
    from ouroboros_gates.ops.gate.cache import compile_gates

    where = _state(state)
    compiled = compile_gates(where, miner or ())
    for entry in compiled.gates:
        typer.echo(f"{entry.name}\t{entry.gate}\t{entry.scope}\tknee={entry.knee}\t{entry.digest[:12]}")
    typer.echo(f"{len(compiled.gates)} gate(s) in {where / 'gates.json'}")


@hooks_app.command("status")
def status(state: StateOption = None) -> None:
    """The compiled gates, and the gate server when it runs."""
    from ouroboros_gates.ops.gate.cache import read_gates

    where = _state(state)
    compiled = read_gates(where)
    if compiled is None:
        typer.echo(f"no gate cache in {where}: run `ouro hooks refresh`")
        return
    typer.echo(f"{len(compiled.gates)} gate(s), written {compiled.written_at}, tenant {compiled.tenant}")
    for entry in compiled.gates:
        typer.echo(f"  {entry.name}\t{entry.gate}\t{entry.scope}\tknee={entry.knee}\t{entry.folder}")
    _print_server(where)


def _print_server(where: Path) -> None:
    """The gate server's pid and the gates it binds, asked without starting one; or that none runs."""
    from ouroboros_gates.ops.gate.client import GateUnavailable, ask

    try:
        answer = ask(str(where), {"op": "ping"}, time.monotonic() + 1.0, start=False)
    except GateUnavailable:
        typer.echo("gate server: not running (the next hook call starts it)")
        return
    typer.echo(
        f"gate server: pid {answer.get('pid')}, binding {', '.join(answer.get('gates', [])) or 'nothing'}"
    )


@hooks_app.command("serve")
def serve(state: StateOption = None) -> None:
    """Run the gate server in the foreground (the hook starts one by itself when none runs)."""
    from ouroboros_gates.ops.gate.start import main as start_main

    raise typer.Exit(start_main(["--state", str(_state(state))]))


@hooks_app.command("stop")
def stop(state: StateOption = None) -> None:
    """Stop the gate server of the state directory."""
    from ouroboros_gates.ops.gate.client import notify

    stopped = notify(str(_state(state)), {"op": "stop"}, wait_s=2.0)
    typer.echo("gate server stopped" if stopped else "no gate server was running")
