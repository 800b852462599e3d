"""Labels: the allow-list is fail-closed, the pair rules, delta units, adjudications and group merges."""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _learn_fixtures import corpus, write_pair

from ouroboros_gates.decider.learn.errors import CatalogError, LearnError, SourceNotAllowed
from ouroboros_gates.decider.learn.groups import advisory_ids, merge_groups, normalise_repo
from ouroboros_gates.decider.learn.labels import adjudication_label, build_labels
from ouroboros_gates.decider.learn.sources import load_sources


def test_normalise_and_merge_groups() -> None:
    assert normalise_repo("https://github.com/Acme/Shop.git") == "acme/shop"
    assert normalise_repo("github.com/russ-lewis/ttt/commit/6096f43") == "russ-lewis/ttt"
    assert advisory_ids("fixes cve-2021-1234 and GHSA-abcd-efgh-jkmp") == {"CVE-2021-1234"}
    merged = merge_groups({"b/x": {"CVE-1"}, "a/y": {"cve-1", "CVE-2"}, "c/z": {"CVE-2"}, "d/w": set()})
    assert merged == {"a/y": "a/y", "b/x": "a/y", "c/z": "a/y", "d/w": "d/w"}


def test_pair_rules_and_delta_units(tmp_path: Path) -> None:
    labels = build_labels([tmp_path / "pairs"], corpus(tmp_path))
    by_ref: dict[str, dict[str, int]] = {}
    for u in labels.units:
        by_ref.setdefault(u.source_ref, {})[u.direction] = u.y
    assert by_ref["a-sql"] == {"vulnerable": 1, "fixed": 0, "introducing": 1, "repair": 0}
    assert by_ref["e-benign"] == {"benign": 0}
    assert "c-twin" not in by_ref and "d-title" not in by_ref
    assert labels.excluded == {"unscorable": 1, "title_tier": 1}
    fixed = next(u for u in labels.units if u.source_ref == "a-sql" and u.direction == "fixed")
    vulnerable = next(u for u in labels.units if u.source_ref == "a-sql" and u.direction == "vulnerable")
    assert fixed.function == vulnerable.function and fixed.code != vulnerable.code
    intro = next(u for u in labels.units if u.source_ref == "a-sql" and u.direction == "introducing")
    assert intro.code == vulnerable.code and intro.base_code == fixed.code
    assert vulnerable.to_label().candidate.pin == vulnerable.pin


def test_title_tier_is_a_sensitivity_arm(tmp_path: Path) -> None:
    labels = build_labels([tmp_path / "pairs"], corpus(tmp_path), include_title=True)
    assert any(u.source_ref == "d-title" for u in labels.units)


def test_advisory_merges_a_mirror_into_one_group(tmp_path: Path) -> None:
    labels = build_labels([tmp_path / "pairs"], corpus(tmp_path))
    groups = {u.source_ref: u.group for u in labels.units}
    assert groups["a-sql"] == groups["b-mirror"] == "acme/shop"
    assert groups["e-benign"] == "other/app"


def test_adjudications(tmp_path: Path) -> None:
    allow = corpus(tmp_path)
    (tmp_path / "adjudications").mkdir()
    rows = [
        {
            "repository": "x/y",
            "language": "python",
            "family": "xss",
            "function": "f",
            "code": "def f(): pass\n",
            "verdict": "True, privileged",
            "adjudicator": "maintainer",
            "text": "reachable",
        },
        {
            "repository": "x/y",
            "language": "python",
            "family": "xss",
            "function": "g",
            "code": "def g(): pass\n",
            "verdict": "False, not reachable",
            "adjudicator": "judge",
            "text": "dead code",
        },
    ]
    (tmp_path / "adjudications" / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    labels = build_labels([tmp_path / "adjudications"], allow)
    assert [(u.function, u.y, u.evidence["adjudicator"]) for u in labels.units] == [
        ("f", 1, "maintainer"),
        ("g", 0, "judge"),
    ]
    assert adjudication_label("True") == 1 and adjudication_label("False, duplicate") == 0
    with pytest.raises(LearnError):
        adjudication_label("agreed")  # a plane verdict is never a label


def test_unlisted_or_reserved_source_is_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allow = corpus(tmp_path)
    for name in ("population-v3-php", "population-v3-php-reserved"):
        write_pair(tmp_path / name, "v3-case", repository="secret/v3")
    opened: list[str] = []
    real_open, real_io_open, real_scandir = builtins.open, io.open, os.scandir

    def spy(real: Any) -> Any:
        def wrapper(file: Any, *args: Any, **kwargs: Any) -> Any:
            opened.append(str(file))
            return real(file, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(builtins, "open", spy(real_open))
    monkeypatch.setattr(io, "open", spy(real_io_open))
    monkeypatch.setattr(os, "scandir", spy(real_scandir))
    for name in ("population-v3-php", "population-v3-php-reserved"):
        with pytest.raises(SourceNotAllowed, match="never read"):
            build_labels([tmp_path / "pairs", tmp_path / name], allow)
    assert opened, "the spy saw the allow-list and the listed source being read"
    assert not [p for p in opened if "population-v3" in p]


def test_bad_catalog_names_file_and_field(tmp_path: Path) -> None:
    allow = corpus(tmp_path)
    folder = write_pair(tmp_path / "pairs", "z-bad")
    text = (folder / "catalog.toml").read_text().replace("line = 2", 'line = "two"')
    (folder / "catalog.toml").write_text(text)
    with pytest.raises(CatalogError, match=r"z-bad/catalog.toml: line: expected int"):
        build_labels([tmp_path / "pairs"], allow)


def test_shipped_allow_list_parses() -> None:
    sources = load_sources(Path(__file__).resolve().parents[3] / "ruleset" / "sources.toml")
    assert {s.id for s in sources} >= {"seeded-pairs", "sven"}


def test_a_source_read_twice_is_refused(tmp_path: Path) -> None:
    allow = corpus(tmp_path)
    with pytest.raises(LearnError, match="'fixture-pairs' is read twice"):
        build_labels([tmp_path / "pairs", tmp_path / "pairs"], allow)
