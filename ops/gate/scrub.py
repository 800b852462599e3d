"""Secrets cut from a hook payload before it is written (hot path: ``re`` only; a string is scanned only for
the shapes whose words it holds).

What counts as a secret (``SHAPES``; the operator-identifier gate, ``ops.redact``, refuses the same in an
exported finding):

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

__all__ = ["PLACEHOLDER", "SHAPES", "find_secrets", "scrub_payload", "scrub_text"]

PLACEHOLDER = "<secret>"


class _Shape:
    """One shape of secret: the words that must be in a text for it to hold one (cheap ``in`` checks, so a
    text without them is never scanned), and its pattern (compiled on first use: the hook is a fresh process
    every call), whose ``value`` group is replaced and ``kept``/``tail`` groups stay."""

    def __init__(self, triggers: tuple[str, ...], lowered: bool, pattern: str, flags: int = 0) -> None:
        self.triggers, self.lowered, self.pattern, self.flags = triggers, lowered, pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def present(self, text: str, low: str) -> bool:
        haystack = low if self.lowered else text
        return any(trigger in haystack for trigger in self.triggers)


_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s;&|]+)"
SHAPES = (
    _Shape(
        ("authorization",),
        True,
        r"(?P<kept>authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)(?P<value>[^\s\"',;]+)",
        re.I,
    ),
    _Shape(("export",), False, r"(?P<kept>\bexport\s+[A-Za-z_][A-Za-z0-9_]*=)" + _VALUE),
    _Shape(
        ("KEY=", "TOKEN=", "SECRET=", "PASSWORD=", "PASSWD=", "CREDENTIAL", "AUTH=", "COOKIE=", "DSN="),
        False,
        r"(?P<kept>(?<![A-Za-z0-9_])[A-Z_][A-Z0-9_]{0,60}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH"
        r"|COOKIE|DSN)=)(?P<value>\"[^\"]*\"|'[^']*'|[^\s;&|,]+)",
    ),
    _Shape(
        ("-password", "-passwd", "-token", "-secret", "-api-key", "-access-key"),
        True,
        r"(?P<kept>--(?:[a-z]+-)*(?:password|passwd|token|secret|api-key|access-key)(?:=|\s+))" + _VALUE,
        re.I,
    ),
    _Shape(
        ("password", "passwd", "secret", "token", "apikey", "api_key", "access_key"),
        True,
        r"(?P<kept>[\"'](?:[a-z]+_)*(?:password|passwd|secret|token|api_?key|access_?key)[\"']\s*:\s*[\"'])"
        r"(?P<value>[^\"']+)",
        re.I,
    ),
    _Shape(("://",), False, r"(?P<kept>://[^\s:/@]{1,200}:)(?P<value>[^\s@/]{1,200})(?P<tail>@)"),
    *(
        _Shape(triggers, False, rf"(?P<value>{pattern})", flags)
        for triggers, pattern, flags in (
            (("sk-",), r"\bsk-[A-Za-z0-9_-]{16,}", 0),
            (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,}", 0),
            (("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{22,}", 0),
            (("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}", 0),
            (("xox",), r"\bxox[abprs]-[A-Za-z0-9-]{10,}", 0),
            (("AKIA",), r"\bAKIA[0-9A-Z]{16}\b", 0),
            (("AIza",), r"\bAIza[0-9A-Za-z_-]{35}", 0),
            (("eyJ",), r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
            (
                ("PRIVATE KEY-----",),
                r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----",
                re.S,
            ),
        )
    ),
)
"""Every shape of secret, a provider's token shape each on its own (a text is scanned once per shape whose
words it holds, by a pattern of one branch). Every open repetition is bounded or stops at a delimiter, so a
scan is linear in the text's length."""

_SECRET_NAME = (
    r"(?:^|[_-])(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
    r"authorization|auth|credentials?|cookie|session[_-]?key|client[_-]?secret)$"
)
_KEPT_KEYS = frozenset(
    {"session_id", "tool_use_id", "hook_event_name", "tool_name", "transcript_path", "cwd"}
)
"""Payload keys that identify the call: never taken for a secret's name."""
_names: list[re.Pattern[str]] = []


def _replace(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return (groups.get("kept") or "") + PLACEHOLDER + (groups.get("tail") or "")


def _shapes(text: str) -> list[_Shape]:
    low = text.lower() if any(shape.lowered for shape in SHAPES) else text
    return [shape for shape in SHAPES if shape.present(text, low)]


def find_secrets(text: str) -> list[str]:
    """The secrets ``text`` still holds, as matched (a value already replaced by ``<secret>`` is not one)."""
    found = [match for shape in _shapes(text) for match in shape.regex.finditer(text)]
    return [match.group() for match in found if _replace(match) != match.group()]


def scrub_text(text: str) -> str:
    """``text`` with every secret's value replaced by ``<secret>`` (what names it is kept)."""
    for shape in _shapes(text):
        text = shape.regex.sub(_replace, text)
    return text


def _secret_name(key: str) -> bool:
    if not _names:
        _names.append(re.compile(_SECRET_NAME, re.IGNORECASE))
    return _names[0].search(key) is not None


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: _scrub_item(key, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


def _scrub_item(key: Any, value: Any) -> Any:
    named = isinstance(key, str) and key not in _KEPT_KEYS and _secret_name(key)
    return PLACEHOLDER if named and isinstance(value, str) and value else _scrub(value)


def scrub_payload(payload: dict[str, Any], record_prompts: bool = False) -> dict[str, Any]:
    """A copy of a hook payload fit to be written: secrets replaced; a prompt dropped unless
    ``record_prompts``."""
    prompt = payload.get("prompt")
    if _keeps_prompt(payload, record_prompts) or not isinstance(prompt, str):
        return dict(_scrub(payload))
    kept = {key: value for key, value in payload.items() if key != "prompt"}
    return {**_scrub(kept), "prompt_chars": len(prompt), "prompt_recorded": False}


def _keeps_prompt(payload: dict[str, Any], record_prompts: bool) -> bool:
    """Whether a prompt the payload holds is kept: when ``record_prompts``, or in any event but
    ``UserPromptSubmit``."""
    return record_prompts or payload.get("hook_event_name") != "UserPromptSubmit"
