"""The operator-identifier gate: what must never leave a tenant inside an exported finding.

An operator identifier is an e-mail address, a host name (a dotted name ending in a letter label, or an
IPv4 address), a home path (``/home/<user>``, ``/Users/<user>``, ``/root``, ``~user``, ``C:\\Users\\<user>``)
or one of the operator's own names the caller knows (the tenant, the user and host the process runs as), and
a secret (``ops.gate.scrub``: tokens, keys, ``Authorization`` credentials, ``export X=…`` values, the one
definition the hook redacts recorded payloads with).
``find`` lists what a text holds; ``scrub`` replaces each with a placeholder, after which ``find`` finds
nothing: the gate an export must pass.
"""

from __future__ import annotations

import contextlib
import getpass
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from ouroboros_gates.ops.gate.scrub import find_secrets, scrub_text

__all__ = ["Gate", "Identifier", "local_names"]

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_HOME = re.compile(
    r"(?:/home/|/Users/|/var/home/|[A-Za-z]:[\\/]+Users[\\/]+)[^/\\\s\"':]+|/root(?![\w.-])|~[A-Za-z_][\w.-]*"
)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
# A dotted name ending in a top-level or site-local suffix (build-07.corp.example.net, box.local); dotted
# code names (os.path, workers.shell) and file names (app.py) end otherwise and are left alone.
_SUFFIXES = (
    "com|net|org|io|dev|app|ai|co|cloud|edu|gov|mil|int|info|biz|me|tech|site|online|xyz|us|uk|de|fr|nl|se|no|fi"
    "|dk|ch|at|be|es|it|pl|cz|ru|cn|jp|kr|in|au|nz|ca|br|mx|eu|local|lan|internal|intranet|corp|home|localdomain"
    "|example|test|invalid|localhost"
)
_HOST = re.compile(
    rf"(?<![\w.@-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?\.)+(?:{_SUFFIXES})(?![\w.-])", re.I
)
_PLACEHOLDERS = {"email": "<email>", "home": "<home>", "host": "<host>", "name": "<operator>"}
_SHAPES = (("email", _EMAIL), ("home", _HOME), ("host", _IPV4), ("host", _HOST))
"""Each kind of identifier with the pattern that finds it, in the order they are found and scrubbed."""


@dataclass(frozen=True)
class Identifier:
    """One operator identifier found in a text: its kind and the text matched."""

    kind: str
    text: str


def local_names() -> tuple[str, ...]:
    """The names of the operator this process runs as: the user and the machine's host name."""
    names = []
    with contextlib.suppress(KeyError, OSError):  # no user name for this uid (containers)
        names.append(getpass.getuser())
    host = socket.gethostname()
    names += [host, host.split(".", 1)[0]]
    return tuple(names)


def _distinctive(names: Iterable[str]) -> list[str]:
    """The names distinctive enough to refuse, longest first: short or generic words ("root", "ci") would cut
    ordinary text apart."""
    common = {"root", "user", "admin", "default"}
    return sorted({n for n in names if len(n) >= 4 and n.lower() not in common}, key=len, reverse=True)


class Gate:
    """Finds and scrubs operator identifiers; ``names`` are the operator's own words to refuse as well."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        kept = _distinctive(names)
        self._names = (
            re.compile("|".join(rf"(?<![\w]){re.escape(n)}(?![\w])" for n in kept), re.IGNORECASE)
            if kept
            else None
        )

    def find(self, text: str) -> list[Identifier]:
        """Every identifier in ``text``, in order of kind."""
        found = [Identifier("secret", secret) for secret in find_secrets(text)]
        found += [Identifier(kind, m.group()) for kind, pattern in _SHAPES for m in pattern.finditer(text)]
        if self._names is not None:
            found += [Identifier("name", m.group()) for m in self._names.finditer(text)]
        return found

    def scrub(self, text: str) -> str:
        """``text`` with every identifier replaced by its placeholder (``<email>``, ``<home>``, …)."""
        text = scrub_text(text)
        for kind, pattern in _SHAPES:
            text = pattern.sub(_PLACEHOLDERS[kind], text)
        if self._names is not None:
            text = self._names.sub(_PLACEHOLDERS["name"], text)
        return text

    def passes(self, text: str) -> bool:
        """Whether ``text`` holds no identifier at all."""
        return not self.find(text)
