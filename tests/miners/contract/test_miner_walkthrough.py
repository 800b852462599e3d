"""The guide "Writing a miner" (docs/miners.md), end to end: a miner kept outside the package, created with
`ouro miner new` in OURO_MINERS_PATH, written from the guide's own code blocks, run on a real projects folder
(the sessions in ../shared/corpora/agent_logs, read in place through symlinks) and labelled by session id;
backtest and mutate exit 1 when they fail; the miner test, and the fleet accepting gates, judge equivalence on
the real sessions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import run_ouro as ouro

from ouroboros_gates.harness import read, summarise

REPO = Path(__file__).resolve().parents[3]
SECTION = re.search(r"# Writing a miner\n(.*)", (REPO / "docs" / "miners.md").read_text(), re.DOTALL)
MAROT = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
MISSES = ["toolu_01NkiH6UJoP8DhVQCaout4Wo", "toolu_01WWrDx5fzMNaU9jDJzyFTBx"]


def block(language: str) -> str:
    assert SECTION is not None, "docs/miners.md is not the 'Writing a miner' guide"
    found = re.search(rf"```{language}\n(.*?)```", SECTION[1], re.DOTALL)
    assert found is not None, f"no {language} block in the miner guide"
    return found[1]


def test_the_readme_names_the_commands_run_here() -> None:
    text = block("sh") + "".join(re.findall(r"```sh\n(.*?)```", SECTION[1] if SECTION else "", re.DOTALL))
    for command in (
        "ouro miner new edit_miss",
        "ouro miner edit-miss findings ~/.claude/projects",
        "ouro miner edit-miss backtest labels.tsv ~/.claude/projects",
        "ouro miner edit-miss mutate labels.tsv ~/.claude/projects",
        "ouro miner test edit_miss --runs ~/.claude/projects",
    ):
        assert command in text, command


def accepted(miners: Path, projects: Path) -> set[str]:
    """The miners the fleet accepts as gates when its event log holds the sessions under ``projects``."""
    from ouroboros_gates.workers.miner.accept import accepted_gates

    return {gate.miner.name for gate in accepted_gates(str(miners), runs=lambda: [projects])}


def _labels(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    path.write_text("".join("\t".join((*row, "walkthrough")) + "\n" for row in rows))
    return path


def _fixture(miner: Path, instance: str, lines: list[str]) -> tuple[str, str]:
    (miner / "fixtures" / instance).mkdir(parents=True)
    (miner / "fixtures" / instance / "events.jsonl").write_text("".join(line + "\n" for line in lines))
    return instance, json.loads(lines[0])["timestamp"][:19] + "Z"


def test_a_miner_outside_the_package_on_a_real_projects_folder(
    shared_corpora: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = shared_corpora / "agent_logs"
    projects = tmp_path / "projects"  # ~/.claude/projects, its project folders read in place
    projects.mkdir()
    (projects / "marot").symlink_to(logs / "claude_code_projects" / "marot_spotter")
    (projects / "transcripts").symlink_to(logs / "claude_code_transcripts")
    monkeypatch.setenv("OURO_MINERS_PATH", str(tmp_path / "miners"))
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> tuple[int, str, str]:
        return ouro(monkeypatch, capsys, *argv)

    status, out, _err = run("miner", "new", "edit_miss")
    miner = tmp_path / "miners" / "edit_miss"
    assert status == 0 and out.splitlines()[0] == f"created {miner}"
    (miner / "extract.py").write_text(block("python"))
    (miner / "rules.dl").write_text(block("datalog"))

    status, out, _err = run("miner", "edit-miss", "findings", str(projects))
    found = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [f["subject"] for f in found] == [
        [{"text": MAROT}, {"text": call}] for call in MISSES
    ]
    assert [[fact["span"]["line"] for fact in f["proof"]] for f in found] == [[258, 259], [1299, 1300]]

    sessions = {run.run: run for run in (summarise(read(p)) for p in sorted(projects.glob("*/*.jsonl")))}
    assert set(sessions) == {
        MAROT,
        "55604662-cf2a-4331-851a-ec234028f8ca",
        "491e126e-1e71-469c-ade2-fcc8af567c74",
        "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
    }
    starts = {name: f"{summary.started_at:%Y-%m-%dT%H:%M:%SZ}" for name, summary in sessions.items()}
    good = [
        (name, "+" if name == MAROT else "-", start, "2026-02-12T14:14:47Z" if name == MAROT else "-")
        for name, start in starts.items()
    ]
    labels = _labels(tmp_path / "labels.tsv", good)
    status, out, err = run("miner", "edit-miss", "backtest", str(labels), str(projects))
    assert (status, err) == (0, "") and "| Backtest FN | 0 |" in out

    every = _labels(tmp_path / "every.tsv", [(name, "+", start, "-") for name, start in starts.items()])
    status, out, err = run("miner", "edit-miss", "backtest", str(every), str(projects))
    assert status == 1 and any(
        re.fullmatch(r"\| Backtest FN \| [1-9]: [^|]+ \|", line) for line in err.splitlines()
    )

    # Session-level labels cannot kill `drop missed(R, C)`: it flags every edit of the session.
    status, out, err = run("miner", "edit-miss", "mutate", str(labels), str(projects))
    assert status == 1 and err.startswith("| Mutation gate | fails: mutation score 0.")
    assert "| drop_literal | line 4: drop `missed(R, C)` | survived |" in out

    text = (logs / "claude_code_projects" / "marot_spotter" / f"{MAROT}.jsonl").read_text().splitlines()
    bash = next(line for line in text if '"name":"Bash"' in line and '"type":"assistant"' in line)
    rows = [
        (*_fixture(miner, "missed", [text[257], text[258]]), "+"),
        (*_fixture(miner, "no-edit", [bash]), "-"),
    ]
    header = (miner / "fixtures" / "labels.tsv").read_text()
    fixture_labels = "".join(f"{name}\t{sign}\t{start}\t-\twalkthrough\n" for name, start, sign in rows)
    (miner / "fixtures" / "labels.tsv").write_text(header + fixture_labels)
    status, out, _err = run("miner", "test", "edit_miss", "--write")
    assert status == 0, out
    assert "drop `missed(R, C)` | equivalent | same verdicts" in (miner / "mutation.md").read_text()
    assert (
        "| Equivalence judged on | the 2 run(s) the checks read, no corpus"
        in (miner / "mutation.md").read_text()
    )

    # On the real sessions that mutant is not equivalent, and it survives the fixtures: the test fails.
    status, out, _err = run("miner", "test", "edit_miss", "--runs", str(projects))
    assert status == 1 and "FAIL  mutation_gate" in out
    assert "  equivalence judged on the 2 run(s) the checks read and 4 corpus run(s): " in out
    assert "edit-miss" not in accepted(tmp_path / "miners", projects)  # the fleet, on the runs its log holds
    edit_ok = _fixture(miner, "edit-ok", [text[265]])  # an Edit that worked kills it
    (miner / "fixtures" / "labels.tsv").write_text(
        header + fixture_labels + f"{edit_ok[0]}\t-\t{edit_ok[1]}\t-\tw\n"
    )
    assert run("miner", "test", "edit_miss", "--write")[0] == 0
    status, out, _err = run("miner", "test", "edit_miss", "--runs", str(projects))
    assert status == 0 and out.splitlines()[-1] == "edit-miss: 8 checks passed", out
    assert "edit-miss" in accepted(tmp_path / "miners", projects)
