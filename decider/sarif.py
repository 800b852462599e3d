"""SARIF 2.1.0 for a scan: one result per reported finding at the sink's line, the flow from the source as a
``codeFlow``, one rule per family with its help, CWE tag and security-severity, and a notification per
instrument that failed on some files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ouroboros_gates import __version__
from ouroboros_gates.decider.decide import Run
from ouroboros_gates.decider.instruments import families

__all__ = ["INFORMATION_URI", "SARIF_SCHEMA", "to_sarif"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/ouroboros-gates/"
_LEVELS = {"block": "error", "advisory": "warning", "drop": "note"}


def _rule(family: str) -> dict[str, Any]:
    about = families().about.get(family)
    title = about.title if about is not None else family.replace("_", " ")
    cwe = about.cwe if about is not None else None
    tags = ["security", *([f"external/cwe/cwe-{cwe}"] if cwe is not None else [])]
    text = about.help if about is not None and about.help else f"Review the {title.lower()} finding."
    cwe_line = f" (CWE-{cwe})" if cwe is not None else ""
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
            "security-severity": f"{about.severity:.1f}" if about is not None else "5.0",
            "tags": tags,
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
        steps = [
            {"location": _location(f["path"], step["line"], f"{step['role']}: {step['text']}")}
            for step in f["flow"]
        ]
        result["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
    return result


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
