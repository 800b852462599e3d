"""The configured forge: ``OURO_FORGE`` names a local forge folder, ``github:OWNER/NAME`` or ``sample``."""

from __future__ import annotations

import os

from ouroboros_gates.forge.base import WritableForge
from ouroboros_gates.forge.local import LocalForge
from ouroboros_gates.schemas.errors import ConfigurationError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["open_forge", "sample_note"]


def open_forge(settings: Settings) -> WritableForge:
    """The forge the settings name; a local one writes into ``<state>/forge`` and clones into its cache."""
    if settings.forge.startswith("github:"):
        try:
            from ouroboros_gates.forge.github import GitHubForge
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] not in {"githubkit", "hishel"}:
                raise
            raise ConfigurationError(
                f"OURO_FORGE: {settings.forge} needs the GitHub forge, an optional part: "
                "pip install 'ouroboros-gates[github]'"
            ) from exc

        owner, _, name = settings.forge.removeprefix("github:").partition("/")
        if not owner or not name:
            raise ConfigurationError(f"OURO_FORGE: {settings.forge!r} is not github:OWNER/NAME")
        return GitHubForge.from_environment(owner, name, os.environ)
    folder = settings.forge_folder
    if not (folder / "forge").is_dir():
        raise ConfigurationError(f"OURO_FORGE: {folder} has no forge/ folder (tickets/, pulls/)")
    state = settings.state_dir
    return LocalForge.from_examples(folder, state / "forge-cache", writes_dir=state / "forge")


def sample_note(settings: Settings) -> str | None:
    """The line a command prints when it works on the sample forge because ``OURO_FORGE`` names none."""
    if settings.forge != "sample":
        return None
    return (
        "forge: the sample forge shipped with the package (OURO_FORGE=DIR or github:OWNER/NAME names yours)"
    )
