"""The hook's and the gate server's settings: typed, with defaults, read from the environment (hot path:
stdlib only, no pydantic).

| setting | type | default |
| --- | --- | --- |
| ``OURO_HOOK_TIMEOUT_S`` (or ``--timeout``) | seconds, 0.1 to 600 | 5 |
| ``OURO_HOOK_AUTOFLUSH`` | flag | on |
| ``OURO_HOOK_TRACE`` | flag | off |
| ``OURO_HOOK_WARN`` | ``next`` or ``sync`` | ``next`` |
| ``OURO_GATE_FAIL`` | ``open`` or ``closed`` | ``open`` |
| ``OURO_GATE_IDLE_S`` | seconds, 1 to 604,800 | 1800 |

A flag is ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off`` (any case; empty: the default).
A value that is not of its type or lies outside its range (``inf``, ``nan``, ``1e300``, ``-1``, ``fast``) is
replaced by the default, and the reader gets one warning line naming the setting, the value and what is
used instead: the hook must never fail the agent for a typo (it prints them on stderr and exits 0).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook never imports typing at run time
    from collections.abc import Mapping

__all__ = ["HookSettings", "ServerSettings", "hook_settings", "server_settings"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class HookSettings:
    """What the hook reads: its timeout, whether it flushes and traces, and whether deny gates fail closed."""

    __slots__ = ("autoflush", "fail_closed", "timeout_s", "trace")

    def __init__(self, timeout_s: float, autoflush: bool, trace: bool, fail_closed: bool) -> None:
        self.timeout_s = timeout_s
        self.autoflush = autoflush
        self.trace = trace
        self.fail_closed = fail_closed


class ServerSettings:
    """What the gate server reads: when warn gates answer, and how long it waits idle."""

    __slots__ = ("idle_s", "warn")

    def __init__(self, warn: str, idle_s: float) -> None:
        self.warn = warn
        self.idle_s = idle_s


class _Reader:
    """Reads settings from one environment, collecting a warning per value it cannot use."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.warnings: list[str] = []

    def _fallback(self, name: str, text: str, wanted: str, default: object) -> None:
        shown = text if len(text) <= 40 else text[:37] + "..."
        self.warnings.append(f"{name}={shown!r} is not {wanted}; using {default}")

    def seconds(self, name: str, low: float, high: float, default: float, given: str | None = None) -> float:
        text = (given if given is not None else self.environ.get(name, "")).strip()
        if not text:
            return default
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if low <= value <= high:  # nan and the infinities fail it
            return value
        self._fallback(name, text, f"a number of seconds from {low:g} to {high:g}", f"{default:g}")
        return default

    def flag(self, name: str, default: bool) -> bool:
        text = self.environ.get(name, "").strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        if text:
            self._fallback(name, text, "1 or 0 (true/false, yes/no, on/off)", "1" if default else "0")
        return default

    def choice(self, name: str, choices: tuple[str, ...]) -> str:
        text = self.environ.get(name, "").strip().lower()
        if text in choices:
            return text
        if text:
            self._fallback(name, text, " or ".join(choices), choices[0])
        return choices[0]


def hook_settings(environ: Mapping[str, str], timeout: str | None = None) -> tuple[HookSettings, list[str]]:
    """The hook's settings from ``environ`` (``timeout``: the ``--timeout`` argument, which wins), and a
    warning line for each value replaced by its default; every setting of the table is checked, those the
    server reads too, so that a typo shows where the user looks."""
    read = _Reader(environ)
    name = "--timeout" if timeout is not None else "OURO_HOOK_TIMEOUT_S"
    settings = HookSettings(
        timeout_s=read.seconds(name, 0.1, 600.0, 5.0, timeout),
        autoflush=read.flag("OURO_HOOK_AUTOFLUSH", True),
        trace=read.flag("OURO_HOOK_TRACE", False),
        fail_closed=read.choice("OURO_GATE_FAIL", ("open", "closed")) == "closed",
    )
    _server(read)
    return settings, read.warnings


def server_settings(environ: Mapping[str, str]) -> tuple[ServerSettings, list[str]]:
    """The gate server's settings from ``environ``, and a warning line for each value replaced."""
    read = _Reader(environ)
    return _server(read), read.warnings


def _server(read: _Reader) -> ServerSettings:
    return ServerSettings(
        warn=read.choice("OURO_HOOK_WARN", ("next", "sync")),
        idle_s=read.seconds("OURO_GATE_IDLE_S", 1.0, 604_800.0, 1800.0),
    )
