"""Secrets cut from a hook payload before it is written (hot path: ``re`` only, one pass per string).

What counts as a secret (``SECRET`` finds each; the operator-identifier gate, ``ops.redact``, refuses the
same in an exported finding):

- an ``Authorization``/``Proxy-Authorization`` header's credentials (``Bearer …``, ``Basic …``, a bare token);
- the value of ``export NAME=…``, and of any assignment or option whose name says it holds a secret
  (``API_KEY=…``, ``--password …``, ``"client_secret": "…"``, ``token: …``);
- a token in a provider's own shape wherever it stands: ``sk-…`` (OpenAI, Anthropic), GitHub's ``ghp_…``,
  ``gho_…``, ``github_pat_…``, GitLab's ``glpat-…``, Slack's ``xox?-…``, AWS access key ids ``AKIA…``,
  Google API keys ``AIza…``, JSON web tokens ``eyJ….….…``, PEM private key blocks;
- the password of a URL (``postgres://user:pw@host``).

``scrub_payload`` copies a payload with every string value scrubbed and the value of every key that names a
secret (``password``, ``api_key``, ``authorization``…) replaced, keeping what identifies the call (session,
tool, ids). ``UserPromptSubmit``'s ``prompt`` is dropped (its length kept) unless prompts are recorded.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from typing import Any

__all__ = ["PLACEHOLDER", "SECRET", "find_secrets", "scrub_payload", "scrub_text"]

PLACEHOLDER = "<secret>"

# An environment variable's name in capitals that says it holds a secret (case-sensitive: ``monkey=`` is not one).
_NAMED = r"(?-i:[A-Z_][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?|AUTH|COOKIE|DSN))"
_SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
    r"authorization|auth|credentials?|cookie|session[_-]?key|client[_-]?secret)$",
    re.IGNORECASE,
)
SECRET = re.compile(
    r"(?P<head>(?:Proxy-)?Authorization\s*[:=]\s*(?:(?:Bearer|Basic|Token|Digest)\s+)?)(?P<auth>[^\s\"',;]+)"
    r"|(?P<export>\bexport\s+[A-Za-z_][A-Za-z0-9_]*=)(?P<exported>\"[^\"]*\"|'[^']*'|[^\s;&|]+)"
    rf"|(?P<assign>\b{_NAMED}=)(?P<assigned>\"[^\"]*\"|'[^']*'|[^\s;&|,]+)"
    r"|(?P<option>--(?:[a-z]+-)*(?:password|passwd|token|secret|api-key|access-key)[= ]\s*)"
    r"(?P<optioned>\"[^\"]*\"|'[^']*'|[^\s;&|]+)"
    r"|(?P<quoted>[\"'](?:[a-z]+_)*(?:password|passwd|secret|token|api_?key|access_?key)[\"']\s*:\s*[\"'])"
    r"(?P<quotedvalue>[^\"']+)"
    r"|(?P<url>[a-z][a-z0-9+.-]*://[^\s:/@]+:)(?P<urlpass>[^\s@/]+)(?P<at>@)"
    r"|(?P<token>\bsk-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"
    r"|\bglpat-[A-Za-z0-9_-]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----)",
    re.IGNORECASE | re.DOTALL,
)
"""Every secret shape, one alternation: a string is scanned once. The ``head``-like groups are kept, the
value groups replaced."""

_KEPT = ("head", "export", "assign", "option", "quoted", "url")
_KEPT_KEYS = frozenset({"session_id", "tool_use_id", "hook_event_name", "tool_name", "transcript_path", "cwd"})
"""Payload keys that identify the call: never taken for a secret's name."""


def _replace(match: re.Match[str]) -> str:
    kept = next((match[name] for name in _KEPT if match[name] is not None), "")
    return kept + PLACEHOLDER + (match["at"] or "")


def find_secrets(text: str) -> list[str]:
    """The secrets ``text`` still holds, as matched (a value already replaced by ``<secret>`` is not one)."""
    return [match.group() for match in SECRET.finditer(text) if _replace(match) != match.group()]


def scrub_text(text: str) -> str:
    """``text`` with every secret's value replaced by ``<secret>`` (what names it is kept)."""
    return SECRET.sub(_replace, text)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: _scrub_item(key, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


def _scrub_item(key: Any, value: Any) -> Any:
    named = isinstance(key, str) and key not in _KEPT_KEYS and _SECRET_NAME.search(key) is not None
    return PLACEHOLDER if named and isinstance(value, str) and value else _scrub(value)


def scrub_payload(payload: dict[str, Any], record_prompts: bool = False) -> dict[str, Any]:
    """A copy of a hook payload fit to be written: secrets replaced; a prompt dropped unless ``record_prompts``."""
    prompt = payload.get("prompt")
    if record_prompts or payload.get("hook_event_name") != "UserPromptSubmit" or not isinstance(prompt, str):
        return dict(_scrub(payload))
    kept = {key: value for key, value in payload.items() if key != "prompt"}
    return {**_scrub(kept), "prompt_chars": len(prompt), "prompt_recorded": False}
