"""Bandit as a library: issues mapped to families, not applicable to other languages, failed when unread."""

from __future__ import annotations

from ouroboros_gates.decider.instruments import bandit_scan
from ouroboros_gates.decider.instruments._py_compat import PLACEHOLDER, parseable
from ouroboros_gates.schemas import State

SHELL = b"""import subprocess


def export(month):
    subprocess.run("report --month " + month, shell=True, check=True)
"""


def test_bandit_finds_a_shell_call_and_maps_its_cwe_to_a_family() -> None:
    issues, status = bandit_scan("python", SHELL)
    assert status.state is State.RAN and status.version and status.version.startswith("bandit-")
    shell = [issue for issue in issues if issue.test_id == "B602"]
    assert shell and shell[0].family == "command_injection" and shell[0].cwe == 78 and shell[0].line == 5
    assert shell[0].severity == "high"


def test_an_import_alone_is_not_a_signal() -> None:
    issues, status = bandit_scan("python", b"import subprocess\nimport pickle\n")
    assert status.state is State.RAN and issues == []


def test_bandit_is_not_applicable_to_javascript() -> None:
    issues, status = bandit_scan("javascript", b"eval(x);\n")
    assert issues == [] and status.state is State.NOT_APPLICABLE


def test_a_file_bandit_cannot_parse_is_failed_not_clean() -> None:
    issues, status = bandit_scan("python", b"def broken(:\n    pass\n")
    assert issues == [] and status.state is State.FAILED


PY312 = """import subprocess


def lookup(db, form):
    sql = f"SELECT * FROM users WHERE name = '{form["name"]}'"
    return db.execute(sql)


def run(args):
    cmd = f"ls {'\\n'.join(args)} {args[0]!r:>{10}}"
    subprocess.call(cmd, shell=True)
    note = f"{
        args[1]  # a comment inside the field
    }"
    return note + f"{f"{args["k"]}"}"


password = "hunter2hunter2"
"""


def test_python_3_12_f_strings_are_read_line_for_line_by_an_older_interpreter() -> None:
    issues, status = bandit_scan("python", PY312.encode())
    assert status.state is State.RAN
    assert {(i.test_id, i.line) for i in issues} == {("B608", 5), ("B602", 11), ("B105", 18)}


def test_the_rewrite_keeps_every_line_and_every_expression_this_interpreter_parses() -> None:
    rewritten = parseable(PY312)
    assert rewritten is not None and rewritten.count("\n") == PY312.count("\n")
    assert 'f"""SELECT * FROM users WHERE name = \'{form["name"]}\'"""' in rewritten  # the quote can stay
    assert "{args[0]!r:>{10}}" in rewritten and f"{{{PLACEHOLDER}}}" in rewritten  # a backslash cannot
    assert parseable("x = 1\n") == "x = 1\n"
    assert parseable("print 'python 2'\n") is None  # not an f-string problem: Bandit fails, and says so
