"""The feature discipline: allow-listed, name-invariant, free of labels, and missing is not zero."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _decider_support import GIT_ENV

from ouroboros_gates.decider import FEATURES, analyse, feature_set_digest, validate_record
from ouroboros_gates.decider.features import (
    EXCLUDED_FIELDS,
    INSTRUMENTS,
    SCHEMA_VERSION,
    FeatureError,
    build_record,
    canonical_x,
)
from ouroboros_gates.schemas import Candidate, InstrumentState, State

ENV = GIT_ENV

PY = """import os
import subprocess


def {run}({cmd}, {fmt}):
    {target} = "/srv/out-" + {fmt}
    subprocess.run("render " + {cmd} + " > " + {target}, shell=True)
    return {target}


def {helper}({name}):
    return os.path.join("/srv", {name})


@{deco}("/x")
def {handler}({req}):
    {run}({req}, "csv")
    return open({helper}({req}))
"""

JS = """export function {show}({el}, {query}) {{
  {el}.innerHTML = "<h2>" + {query} + "</h2>";
}}

export function {count}({el}, {n}) {{
  {el}.textContent = String({n});
}}
"""

JAVA = """class {cls} {{
  Object {find}(String {ident}) {{
    String {q} = "SELECT * FROM t WHERE id = " + {ident};
    return {stmt}.executeQuery({q});
  }}
}}
"""

C = """#include <string.h>
void {copy}(char *{dst}, const char *{src}) {{
  strcpy({dst}, {src});
}}
int {caller}(char *{buf}) {{ {copy}({buf}, "x"); return 0; }}
"""

PHP = """<?php
function {prefs}(${raw}) {{
  return unserialize(${raw});
}}
"""

NAMES_A = dict(
    run="export_report",
    cmd="month",
    fmt="fmt",
    target="target",
    helper="invoice_path",
    name="name",
    deco="route",
    handler="invoice",
    req="request",
    show="renderHeading",
    el="el",
    query="query",
    count="renderCount",
    n="n",
)
NAMES_B = dict(
    run="zz_build",
    cmd="alpha",
    fmt="beta",
    target="gamma",
    helper="qq_locate",
    name="delta",
    deco="expose",
    handler="hh_entry",
    req="payload",
    show="paintTitle",
    el="node",
    query="words",
    count="paintTotal",
    n="total",
)
NAMES_A |= dict(cls="Repo", find="find", ident="id", q="q", stmt="stmt", copy="copy", dst="dst", src="src")
NAMES_A |= dict(caller="main2", buf="buf", prefs="prefs", raw="raw")
NAMES_B |= dict(
    cls="Zeta", find="lookUp", ident="key", q="text", stmt="handle", copy="dup", dst="to", src="from_"
)
NAMES_B |= dict(caller="k9", buf="mem", prefs="settingsOf", raw="blob")


def _repo(root: Path, files: dict[str, str], message: str, date: str) -> str:
    root.mkdir(parents=True)
    env = {**ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, env=env, check=True)
    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def _shop(root: Path, names: dict[str, str], layout: tuple[str, str], message: str, date: str) -> str:
    py, js = layout
    stem = js.rsplit("/", 1)[0]
    files = {py: PY.format(**names), js: JS.format(**names)}
    files |= {
        f"{stem}/{names['cls']}.java": JAVA.format(**names),
        f"{stem}/{names['copy']}.c": C.format(**names),
    }
    files |= {f"{stem}/{names['prefs']}.php": PHP.format(**names)}
    return _repo(root, files, message, date)


def _xs(root: Path, head: str, repo_key: str) -> list[tuple[str, str, int, bytes]]:
    found = analyse(root, head, None, repo_key)
    return sorted((a.language, a.candidate.family, a.start_line, canonical_x(a.record)) for a in found)


def test_features_are_allow_listed(tmp_path: Path) -> None:
    head = _shop(tmp_path / "a", NAMES_A, ("shop/app.py", "web/ui.js"), "one", "2026-01-01T00:00:00+00:00")
    found = analyse(tmp_path / "a", head, None, "owner/a")
    assert {a.candidate.family for a in found} >= {"command_injection", "path_traversal", "xss"}
    allowed = {spec.name for spec in FEATURES}
    for item in found:
        assert set(item.record.x) == allowed
        assert set(item.record.instruments) == set(INSTRUMENTS)
        assert item.record.feature_set_digest == feature_set_digest()
        assert item.record.schema_version == SCHEMA_VERSION
        validate_record(item.record)
    for spec in FEATURES:
        assert spec.type in {"bool", "int", "float", "enum"} and spec.name.startswith(spec.instrument + ".")
        assert spec.type != "int" or (spec.cap is not None and spec.cap > 0)
        assert spec.type != "enum" or spec.vocabulary
    assert len({spec.name for spec in FEATURES}) == len(FEATURES)


def test_record_is_name_invariant(tmp_path: Path) -> None:
    head_a = _shop(tmp_path / "a", NAMES_A, ("shop/app.py", "web/ui.js"), "one", "2026-01-01T00:00:00+00:00")
    head_b = _shop(
        tmp_path / "other-name",
        NAMES_B,
        ("lib/x/server.py", "assets/y/page.js"),
        "two",
        "2026-03-03T03:03:03+00:00",
    )
    assert head_a != head_b
    xs_a, xs_b = _xs(tmp_path / "a", head_a, "owner/a"), _xs(tmp_path / "other-name", head_b, "someone/else")
    assert {language for language, *_ in xs_a} == {"python", "javascript", "java", "c", "php"}
    assert len(xs_a) >= 7
    assert xs_a == xs_b


def test_label_fields_never_reach_features(tmp_path: Path) -> None:
    files = {"shop/app.py": PY.format(**NAMES_A), "web/ui.js": JS.format(**NAMES_A)}
    head_a = _repo(tmp_path / "a", files, "one", "2026-01-01T00:00:00+00:00")
    case = {"site_match": True, "in_fix_range": True, "declared_sites": [{"path": "shop/app.py", "line": 7}]}
    labelled = {**files, "case.json": json.dumps(case), "labels.tsv": "invoice\t+\tfixed_pin\n"}
    head_b = _repo(tmp_path / "b", labelled, "fix CVE-2026-0001 site_match", "2026-01-01T00:00:00+00:00")
    assert _xs(tmp_path / "a", head_a, "owner/a") == _xs(tmp_path / "b", head_b, "owner/a")
    record = analyse(tmp_path / "a", head_a, None, "owner/a")[0].record
    for field in sorted(EXCLUDED_FIELDS):
        with pytest.raises(FeatureError, match="label information or an identity"):
            validate_record({**record.x, field: True}, record.instruments)
    with pytest.raises(FeatureError, match="not allow-listed"):
        build_record(record.candidate, "python", {**record.x, "qr.site_match_hits": 1}, record.instruments)


def test_missing_is_not_zero(tmp_path: Path) -> None:
    head = _shop(tmp_path / "a", NAMES_A, ("shop/app.py", "web/ui.js"), "one", "2026-01-01T00:00:00+00:00")
    found = analyse(tmp_path / "a", head, None, "owner/a")
    js = next(a for a in found if a.language == "javascript")
    assert js.record.instruments["bandit"].state is State.NOT_APPLICABLE
    assert js.record.x["bandit.issues"] is None and js.record.x["bandit.max_severity"] is None
    assert (
        js.record.instruments["delta"].state is State.NOT_APPLICABLE and js.record.x["delta.novelty"] is None
    )
    py = next(a for a in found if a.candidate.family == "path_traversal" and a.record.x["bandit.issues"] == 0)
    assert (
        py.record.instruments["bandit"].state is State.RAN and py.record.x["bandit.max_severity"] == "absent"
    )
    candidate = Candidate(repo="o/r", pin="a" * 40, path="p.py", function="f", family="xss")
    states = dict(py.record.instruments)
    uncovered = build_record(
        candidate, "python", py.record.x, {**states, "qr": InstrumentState(state=State.NONE)}
    )
    assert uncovered.x["qr.enabled_hits"] is None and py.record.x["qr.enabled_hits"] == 0
    with pytest.raises(FeatureError, match="is null but qr ran"):
        validate_record({**py.record.x, "qr.enabled_hits": None}, states)
    with pytest.raises(FeatureError, match="did not run"):
        validate_record(dict(py.record.x), {**states, "qr": InstrumentState(state=State.FAILED)})


def test_values_outside_their_type_are_refused() -> None:
    states = {name: InstrumentState(state=State.RAN) for name in INSTRUMENTS}
    base = {
        spec.name: (False if spec.type == "bool" else 0 if spec.type == "int" else 0.0) for spec in FEATURES
    }
    base |= {spec.name: spec.vocabulary[0] for spec in FEATURES if spec.type == "enum"}
    validate_record(base, states)
    bad = [
        ("facts.callers", 41),
        ("facts.is_global", 1),
        ("delta.novelty", "maybe"),
        ("qr.max_precision_estimate", 1.5),
    ]
    for name, value in bad:
        with pytest.raises(FeatureError, match=name.replace(".", r"\.")):
            validate_record({**base, name: value}, states)
    missing = dict(base)
    del missing["facts.callers"]
    with pytest.raises(FeatureError, match="missing"):
        validate_record(missing, states)
    assert len(feature_set_digest()) == 64


def test_a_record_of_another_feature_set_is_refused(tmp_path: Path) -> None:
    head = _shop(tmp_path / "a", NAMES_A, ("shop/app.py", "web/ui.js"), "one", "2026-01-01T00:00:00+00:00")
    record = analyse(tmp_path / "a", head, None, "owner/a")[0].record
    validate_record(record)
    with pytest.raises(FeatureError, match="another feature set"):
        validate_record(record.model_copy(update={"feature_set_digest": "0" * 64}))
