"""Bandit as a library: issues mapped to families, not applicable to other languages, failed when unread."""

from __future__ import annotations

from ouroboros_gates.decider.instruments import bandit_scan
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
