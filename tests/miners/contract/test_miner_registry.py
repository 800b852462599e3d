"""Discovery: the package's miners, OURO_MINERS_PATH, definition errors; and `ouro miner new`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ouroboros_gates.miners import (
    MINERS_PATH_ENV,
    MinerDefinitionError,
    MinerNotFoundError,
    MinerUsageError,
    discover,
    find_miner,
    load_miner,
    miner_test,
    new_miner,
)
from ouroboros_gates.miners.registry import MINERS_DIR, miner_folders

EXTRACT = """
from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, Text

NAME = "{name}"
PACKAGE = "{package}"
VERDICTS = ("odd",)
SCOPE = "tenant"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S2"
GATE = "deny"


def extract(item: CorpusItem):
    yield Fact(predicate="run", args=(Text(text=item.instance),))
"""


def _miner(root: Path, folder: str, name: str, drop: str | None = None) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    text = EXTRACT.format(name=name, package=folder)
    if drop:
        text = "\n".join(line for line in text.splitlines() if not line.startswith(drop))
    (path / "extract.py").write_text(text)
    (path / "rules.dl").write_text("/* predicate odd(R) */\nodd(R) :- run(R).\n")
    return path


def test_the_template_is_installed_and_found_by_name_or_folder() -> None:
    miners, broken = discover("")
    assert miners["draft-pr-late"].folder == MINERS_DIR / "_template"
    assert not broken
    template = find_miner("_template", extra="")
    assert template == find_miner("draft-pr-late", extra="")
    assert (template.package, template.verdicts, template.gate, template.origin) == (
        "ouroboros_gates.miners._template",
        ("invisible",),
        "warn",
        "installed",
    )
    assert "datalog" not in {folder.name for folder, _origin in miner_folders("")}


def test_miners_on_ouro_miners_path_are_imported_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _miner(one, "odd_runs", "odd-runs")
    single = _miner(two, "solo", "solo")  # a directory that is itself a miner
    monkeypatch.setenv(MINERS_PATH_ENV, f"{one}:{single}")
    miners, broken = discover()
    assert not broken and {"draft-pr-late", "odd-runs", "solo"} <= set(miners)
    odd = find_miner("odd-runs")
    assert odd.origin == f"{MINERS_PATH_ENV}:{one}" and odd.scope.value == "tenant" and odd.gate == "deny"
    assert odd.rules().program.rules[0].head.predicate == "odd"
    assert find_miner("solo").folder == single.resolve()


def test_two_miners_with_one_name_are_refused(tmp_path: Path) -> None:
    _miner(tmp_path / "a", "first", "same")
    _miner(tmp_path / "b", "second", "same")
    with pytest.raises(MinerDefinitionError, match="two miners are named 'same'"):
        discover(f"{tmp_path / 'a'}:{tmp_path / 'b'}")


@pytest.mark.parametrize(
    ("drop", "message"),
    [("SCOPE", "no SCOPE"), ("GATE", "no GATE"), ("def extract", "cannot import|no extract")],
)
def test_a_broken_definition_names_its_file(tmp_path: Path, drop: str, message: str) -> None:
    folder = _miner(tmp_path, "broken", "broken", drop=drop)
    with pytest.raises(MinerDefinitionError, match=message) as caught:
        load_miner(folder, "test")
    assert "broken/extract.py" in str(caught.value)
    miners, broken = discover(str(tmp_path))
    assert folder in broken and "broken" not in miners


def test_a_wrong_constant_is_named(tmp_path: Path) -> None:
    folder = _miner(tmp_path, "wrong", "wrong")
    text = (folder / "extract.py").read_text().replace('GATE = "deny"', 'GATE = "block"')
    (folder / "extract.py").write_text(text.replace('PACKAGE = "wrong"', 'PACKAGE = "elsewhere"'))
    with pytest.raises(MinerDefinitionError, match="PACKAGE = 'elsewhere' is not the folder's import path"):
        load_miner(folder, "test")


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(
        MinerNotFoundError, match=r"no miner named 'nope'; known: draft-pr-late \(_template\)"
    ):
        find_miner("nope", extra="")


def test_new_fails_its_test_until_fixtures_are_labelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = new_miner("scratch_probe", tmp_path)
    assert sorted(p.name for p in target.iterdir()) == [
        "README.md",
        "__init__.py",
        "extract.py",
        "fixtures",
        "rules.dl",
    ]
    text = (target / "extract.py").read_text()
    assert 'NAME = "scratch-probe"' in text and 'PACKAGE = "scratch_probe"' in text
    monkeypatch.setenv(MINERS_PATH_ENV, str(tmp_path))
    miner = find_miner("scratch-probe")
    report = miner_test(miner)
    assert not report.passed
    assert [c.name for c in report.checks if not c.passed] == ["fixtures_labelled"]
    # Once its author labels fixture runs (here the template's, unchanged) and writes the files, it passes.
    template = MINERS_DIR / "_template" / "fixtures"
    shutil.rmtree(target / "fixtures")
    shutil.copytree(template, target / "fixtures")
    assert not miner_test(miner).passed  # the generated files are missing
    assert miner_test(miner, write=True).written
    again = miner_test(miner)
    assert again.passed, again.lines()
    assert "template_floor" not in {c.name for c in again.checks}


@pytest.mark.parametrize("name", ["list", "test", "_template", "datalog", "9lives", "has-dash"])
def test_new_refuses_reserved_or_bad_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(MinerUsageError, match="Python identifier"):
        new_miner(name, tmp_path)


def test_new_refuses_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(MinerUsageError, match="already exists"):
        new_miner("taken", tmp_path)


def test_a_local_claim_is_checked_on_the_fixtures(tmp_path: Path) -> None:
    wrong = new_miner("scratch_wrong_local", tmp_path)
    text = (wrong / "extract.py").read_text()
    (wrong / "extract.py").write_text(text.replace('GATE = "warn"', 'GATE = "warn"\nLOCAL = "yes"'))
    with pytest.raises(MinerDefinitionError, match="LOCAL = 'yes' is not True or False"):
        load_miner(wrong, "test")
    # The template's score is the run's time to its first draft: a whole-run fact, not one event's.
    target = new_miner("scratch_local", tmp_path)
    shutil.rmtree(target / "fixtures")
    shutil.copytree(MINERS_DIR / "_template" / "fixtures", target / "fixtures")
    text = (target / "extract.py").read_text()
    (target / "extract.py").write_text(text.replace('GATE = "warn"', 'GATE = "warn"\nLOCAL = True'))
    miner = load_miner(target, "test")
    assert miner.local
    report = miner_test(miner, write=True)
    failed = [c for c in report.checks if not c.passed]
    assert [c.name for c in failed] == ["local_facts"]
    assert "differ when its events are read one at a time" in failed[0].detail
