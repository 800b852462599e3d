"""SARIF 2.1.0 for a scan: one result per reported finding at the sink's line, the flow from the source as a
``codeFlow``, one rule per family with its help, CWE tag and security-severity, and a notification per
instrument that failed on some files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ouroboros_gates import __version__
from ouroboros_gates.decider.decide import Run
from ouroboros_gates.decider.instruments import families

__all__ = ["INFORMATION_URI", "SARIF_SCHEMA", "to_sarif"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/ouroboros-gates/"
_LEVELS = {"block": "error", "advisory": "warning", "drop": "note"}


@dataclass(frozen=True)
class _Described:
    """What a family's rule says: its title, CWE, help text and security severity."""

    title: str
    cwe: int | None
    text: str
    severity: str

    @classmethod
    def of(cls, family: str) -> _Described:
        """A family as the families table describes it (its name and a generic help when not listed)."""
        about = families().about.get(family)
        if about is None:
            title = family.replace("_", " ")
            return cls(title, None, f"Review the {title.lower()} finding.", "5.0")
        text = about.help or f"Review the {about.title.lower()} finding."
        return cls(about.title, about.cwe, text, f"{about.severity:.1f}")

    @property
    def cwe_line(self) -> str:
        """`` (CWE-n)`` after the title, or nothing without a CWE."""
        return f" (CWE-{self.cwe})" if self.cwe is not None else ""

    @property
    def tags(self) -> list[str]:
        """``security``, and the CWE's tag when there is one."""
        return ["security", *([f"external/cwe/cwe-{self.cwe}"] if self.cwe is not None else [])]


def _rule(family: str) -> dict[str, Any]:
    described = _Described.of(family)
    title, text, cwe_line = described.title, described.text, described.cwe_line
    return {
        "id": family,
        "name": "".join(part.capitalize() for part in family.split("_")),
        "shortDescription": {"text": f"{title}{cwe_line}"},
        "fullDescription": {
            "text": f"{title}{cwe_line}: a candidate of this family, decided per function by the "
            "decision engine from the instruments' signals and the labelled memory."
        },
        "help": {"text": text, "markdown": f"**{title}**{cwe_line}\n\n{text}"},
        "defaultConfiguration": {"level": "warning"},
        "properties": {
            "security-severity": described.severity,
            "tags": described.tags,
            "precision": "medium",
        },
    }


def _location(path: str, line: int, text: str | None = None) -> dict[str, Any]:
    where: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": path, "uriBaseId": "SRCROOT"},
            "region": {"startLine": line},
        }
    }
    if text:
        where["message"] = {"text": text}
    return where


def _result(f: Mapping[str, Any], index: int) -> dict[str, Any]:
    decision = f["decision"]
    p = "unscored" if decision["p"] is None else f"p={decision['p']:.2f}"
    text = f"{decision['operating_point'].upper()} ({p}): {decision['rationale'] or f['family']}"
    location = _location(f["path"], f["line"])
    location["logicalLocations"] = [{"name": f["function"], "kind": "function"}]
    result: dict[str, Any] = {
        "ruleId": f["family"],
        "ruleIndex": index,
        "level": _LEVELS[decision["operating_point"]],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"ouroboros/v1": f["fingerprint"]},
        "properties": {"decision": decision, "signals": f["signals"]},
    }
    if f["flow"]:
        result["codeFlows"] = [{"threadFlows": [{"locations": _flow_locations(f)}]}]
    return result


def _flow_locations(f: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A finding's flow as SARIF thread-flow locations, each step with its role and text."""
    return [
        {"location": _location(f["path"], step["line"], f"{step['role']}: {step['text']}")}
        for step in f["flow"]
    ]


def _notifications(failures: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    return [
        {
            "level": "warning",
            "descriptor": {"id": name},
            "message": {
                "text": f"{name} failed on {len(paths)} file(s), which it did not read: "
                f"{', '.join(sorted(paths)[:5])}{' …' if len(paths) > 5 else ''}"
            },
        }
        for name, paths in sorted(failures.items())
        if paths
    ]


def to_sarif(
    run: Run,
    findings: list[dict[str, Any]],
    failures: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The SARIF log of the reported findings (BLOCK is ``error``, ADVISORY ``warning``)."""
    names = sorted({f["family"] for f in findings})
    index = {family: i for i, family in enumerate(names)}
    notes = _notifications(failures or {})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ouroboros",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(family) for family in names],
                    }
                },
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
                "results": [_result(f, index[f["family"]]) for f in findings],
                "properties": {
                    "decision": {
                        "program_id": run.program_id,
                        "variant": run.variant,
                        "fallback": run.fallback,
                        "memory_snapshot_digest": run.memory_digest,
                    }
                },
            }
        ],
    }
