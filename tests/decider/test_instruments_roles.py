"""Wrapper-role inference to depth 3, and the repository facts of the tree-sitter call graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from ouroboros_gates.decider.instruments import build_call_graph, infer_roles, roles
from ouroboros_gates.decider.instruments.rules import RulesetError
from ouroboros_gates.decider.languages import GLOBAL, ParsedFile, parse_source

CHAIN = b"""import os


def level0(cmd):
    os.system(cmd)


def level1(arg):
    level0("run " + arg)


def level2(value):
    prefix = "x"
    built = prefix + value
    level1(built)


def level3(item):
    level2(item)


def level4(thing):
    level3(thing)


def constant():
    os.system("ls")
"""

APP = b"""from tools import level4


@route("/go")
def handler(request):
    level4(request)


level4("boot")
"""


def _parsed() -> dict[str, ParsedFile]:
    return {
        "tools.py": parse_source("tools.py", "python", CHAIN),
        "app.py": parse_source("app.py", "python", APP),
    }


def test_a_wrapper_is_inferred_to_depth_three_and_no_further() -> None:
    roles = infer_roles(_parsed())
    wraps = {name: roles[("tools.py", name)].wraps.get(("sink", "command")) for name in ("level0", "level1")}
    assert wraps == {"level0": 1, "level1": 2}
    assert roles[("tools.py", "level2")].wraps.get(("sink", "command")) == 3
    assert ("sink", "command") not in roles[("tools.py", "level3")].wraps
    level2_uses = roles[("tools.py", "level2")].uses
    assert [(u.origin, u.depth, u.param_reaches) for u in level2_uses] == [("inferred_wrapper", 2, True)]
    assert "wrapper:sink:command:1" in roles[("tools.py", "level0")].describe()


def test_a_constant_argument_is_a_sink_call_that_no_parameter_reaches() -> None:
    (use,) = infer_roles(_parsed())[("tools.py", "constant")].uses
    assert (use.origin, use.depth, use.nonconstant, use.param_reaches) == ("language", 0, False, False)


def test_call_graph_facts_callers_files_entry_distance() -> None:
    parsed = _parsed()
    graph = build_call_graph(parsed)
    tools = parsed["tools.py"]
    by_name = {f.name: f for f in tools.functions}
    level4 = graph.facts("tools.py", by_name["level4"])
    assert (level4.callers, level4.caller_files) == (2, 1)
    assert level4.entry_distance == 1  # called from <global> and from a decorated handler
    assert graph.facts("tools.py", by_name["level0"]).entry_distance == 5
    assert graph.facts("tools.py", by_name["constant"]).entry_distance == 0  # nothing calls it
    handler = next(f for f in parsed["app.py"].functions if f.name == "handler")
    assert graph.facts("app.py", handler).decorated and graph.facts("app.py", handler).entry_distance == 0
    glob = graph.facts("app.py", parsed["app.py"].functions[-1])
    assert glob.is_global and parsed["app.py"].functions[-1].name == GLOBAL
    assert by_name["level2"].end_line - by_name["level2"].start_line + 1 == 4


def test_functions_are_found_in_every_language() -> None:
    samples = {
        "javascript": (b"class A { run(x) { exec(x); } }\nconst f = (y) => eval(y);\n", {"A.run", "f"}),
        "typescript": (b"function g(a: string): void { fetch(a); }\n", {"g"}),
        "java": (b"class B { void m(String q) { s.executeQuery(q); } }\n", {"B.m"}),
        "php": (b"<?php function h($a) { system($a); }\n", {"h"}),
        "c": (b"int main(int argc, char **argv) { system(argv[1]); return 0; }\n", {"main"}),
        "cpp": (b'void Shop::load(const char *p) { fopen(p, "r"); }\n', {"Shop.load"}),
    }
    for language, (source, names) in samples.items():
        parsed = parse_source(f"x.{language}", language, source)
        assert {f.name for f in parsed.functions if f.name != GLOBAL} == names, language
        assert not parsed.has_errors, language
        roles = infer_roles({"x": parsed})
        assert any(r.uses for r in roles.values()), language


def test_a_file_with_syntax_errors_is_marked_and_still_parsed() -> None:
    parsed = parse_source("bad.py", "python", b"def ok(a):\n    return a\n\ndef broken(:\n")
    assert parsed.has_errors
    assert parsed.enclosing(2).name == "ok"


def test_annotated_java_and_php_functions_count_as_registered_entries() -> None:
    java = parse_source(
        "A.java", "java", b'class A { @GetMapping("/x") String get(String q) { return q; } void h() {} }'
    )
    php = parse_source(
        "a.php", "php", b'<?php class C { #[Route("/x")] public function m($a) {} function n() {} }'
    )
    assert [(f.name, f.decorated) for f in java.functions[:-1]] == [("A.get", True), ("A.h", False)]
    assert [(f.name, f.decorated) for f in php.functions[:-1]] == [("C.m", True), ("C.n", False)]


def test_a_methods_instance_parameter_is_not_data() -> None:
    source = b"""class Store:
    def run(self, sql):
        self.conn.execute(sql)

    def fixed(self):
        self.conn.execute(self.query)

    @staticmethod
    def direct(conn, sql):
        conn.execute(sql)
"""
    parsed = parse_source("store.py", "python", source)
    assert [f.params for f in parsed.functions[:-1]] == [("sql",), (), ("conn", "sql")]
    roles = infer_roles({"store.py": parsed})
    reaches = {
        name: [u.param_reaches for u in roles[("store.py", name)].uses]
        for name in ("Store.run", "Store.fixed")
    }
    assert reaches == {"Store.run": [True], "Store.fixed": [False]}


def test_overloads_keep_their_own_keys_and_share_their_callers() -> None:
    source = b"""class Q {
  Object run(String s) { return stmt.executeQuery(s); }
  Object run(int n) { return run("SELECT " + n); }
  void go(String v) { run(v); }
}
"""
    parsed = parse_source("Q.java", "java", source)
    names = [f.name for f in parsed.functions[:-1]]
    assert names == ["Q.run", "Q.run#2", "Q.go"]
    graph = build_call_graph({"Q.java": parsed})
    first, second = parsed.functions[0], parsed.functions[1]
    assert graph.facts("Q.java", first).callers == 2 and graph.facts("Q.java", second).callers == 1
    assert parsed.enclosing(3).name == "Q.run#2"


def test_a_vocabulary_entry_that_is_not_a_table_names_its_file_and_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "semantic").mkdir()
    (tmp_path / "semantic" / "python.toml").write_text('sink = ["os.system"]\n')
    monkeypatch.setattr(roles, "RULESET", tmp_path)
    roles._entries.cache_clear()
    try:
        with pytest.raises(RulesetError, match=r"semantic/python.toml: sink 'os.system': expected a table"):
            roles.vocabulary("python")
    finally:
        roles._entries.cache_clear()
