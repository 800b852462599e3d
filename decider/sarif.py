"""SARIF 2.1.0 for a scan: one result per reported finding, ``properties.decision`` carrying the decision."""

from __future__ import annotations

from typing import Any

from ouroboros_gates.decider.decide import Run

__all__ = ["SARIF_SCHEMA", "to_sarif"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVELS = {"block": "error", "advisory": "warning", "drop": "note"}


def _rule(family: str) -> dict[str, Any]:
    return {
        "id": family,
        "name": "".join(part.capitalize() for part in family.split("_")),
        "shortDescription": {"text": f"{family.replace('_', ' ')} (decided per candidate)"},
        "defaultConfiguration": {"level": "warning"},
    }


def to_sarif(run: Run, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """The SARIF log of the reported findings (BLOCK is ``error``, ADVISORY ``warning``)."""
    families = sorted({f["family"] for f in findings})
    index = {family: i for i, family in enumerate(families)}
    results = []
    for f in findings:
        decision = f["decision"]
        p = "unscored" if decision["p"] is None else f"p={decision['p']:.2f}"
        text = f"{decision['operating_point'].upper()} ({p}): {decision['rationale'] or f['family']}"
        results.append({
            "ruleId": f["family"], "ruleIndex": index[f["family"]], "level": _LEVELS[decision["operating_point"]],
            "message": {"text": text},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f["path"], "uriBaseId": "SRCROOT"},
                "region": {"startLine": f["start_line"], "endLine": max(f["end_line"], f["start_line"])},
            }, "logicalLocations": [{"name": f["function"], "kind": "function"}]}],
            "partialFingerprints": {"ouroboros/v1": f["fingerprint"]},
            "properties": {"decision": decision, "signals": f["signals"]},
        })  # fmt: skip
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ouroboros",
                                "rules": [_rule(family) for family in families]}},
            "results": results,
            "properties": {"decision": {"program_id": run.program_id, "variant": run.variant, "fallback": run.fallback,
                                        "memory_snapshot_digest": run.memory_digest}},
        }],
    }  # fmt: skip
