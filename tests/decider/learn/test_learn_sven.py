"""The SVEN importer on the real corpus (development machines only) and on a line written in its shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouroboros_gates.decider.learn.errors import CatalogError
from ouroboros_gates.decider.learn.labels import build_labels
from ouroboros_gates.decider.learn.sources import default_allow_list
from ouroboros_gates.decider.learn.sven import load_sven, sven_pair

ROW = {
    "func_name": "lookup",
    "file_name": "app/db.py",
    "vul_type": "cwe-089",
    "commit_link": "github.com/Some-Owner/Some.Repo/commit/0123abc",
    "func_src_before": "def lookup(c, n):\n    return c.execute(\"SELECT * FROM t WHERE n = '%s'\" % n)\n",
    "func_src_after": 'def lookup(c, n):\n    return c.execute("SELECT * FROM t WHERE n = ?", (n,))\n',
    "line_changes": {"deleted": [{"line_no": 2}], "added": [{"line_no": 2}]},
}


def test_a_row_in_the_sven_shape() -> None:
    pair = sven_pair(ROW, "cwe-089:1")
    assert (pair.repo, pair.language, pair.family, pair.line) == (
        "some-owner/some.repo",
        "python",
        "sql_injection",
        2,
    )
    assert (
        pair.licence == "unknown" and not pair.unscorable and pair.vulnerable.code == ROW["func_src_before"]
    )


def test_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "cwe-089.jsonl").write_text(json.dumps(ROW) + "\n" + json.dumps({"func_name": "x"}) + "\n")
    with pytest.raises(CatalogError, match=r"cwe-089\.jsonl:2: "):
        load_sven(tmp_path)


def test_the_real_corpus(shared_corpora: Path) -> None:
    sven = shared_corpora / "vuln" / "sven_train"
    pairs = load_sven(sven)
    assert len(pairs) == 720
    labels = build_labels([sven], default_allow_list())
    summary = labels.summary()
    assert summary["excluded"] == {"unscorable": 4}  # identical before and after
    assert (
        summary["units"] == 4 * 716 and summary["groups"] == 255
    )  # 256 repositories, two differ only in case
    assert set(summary["by_language"]) == {"c", "cpp", "python"}
    assert set(summary["groups_by_family"]) == {
        "command_injection",
        "memory_safety",
        "path_traversal",
        "sql_injection",
        "xss",
    }


def test_a_c_function_cut_at_its_name_gets_a_return_type_on_both_sides() -> None:
    before = "put(char *dst, int n)\n{\n    dst[n] = 0;\n}\n"
    after = "put(char *dst, int n)\n{\n    if (n < 8)\n        dst[n] = 0;\n}\n"
    row = ROW | {
        "func_name": "put",
        "file_name": "src/buf.c",
        "vul_type": "cwe-787",
        "func_src_before": before,
        "func_src_after": after,
        "line_changes": {"deleted": [{"line_no": 3}], "added": [{"line_no": 3}, {"line_no": 4}]},
    }
    pair = sven_pair(row, "cwe-787:1")
    assert pair.vulnerable.code == "int\n" + before and pair.fixed.code == "int\n" + after
    assert (pair.function, pair.line, pair.family) == ("put", 4, "memory_safety")
    kept = sven_pair(row | {"func_src_before": "static int put(char *dst, int n)\n{\n}\n"}, "cwe-787:2")
    assert (
        kept.vulnerable.code == "static int put(char *dst, int n)\n{\n}\n"
    )  # a definition already: as it is


def test_a_cpp_name_with_its_namespace_becomes_the_name_of_the_function_defined() -> None:
    code = "std::string Reader::extract(const string &path) {\n  return path;\n}\n"
    row = ROW | {
        "func_name": "ns::Reader::extract",
        "file_name": "src/Reader.cpp",
        "vul_type": "cwe-022",
        "func_src_before": code,
        "func_src_after": code.replace("path;", "clean(path);"),
    }
    assert sven_pair(row, "cwe-022:1").function == "Reader.extract"
    assert sven_pair(row | {"func_name": "other::name"}, "cwe-022:2").function == "other::name"
