"""examples/: the sample corpus is well-formed, consistent across files, and reproducible."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
RUNS = EX / "runs"
GIT = shutil.which("git")
needs_git = pytest.mark.skipif(
    GIT is None or shutil.which("bash") is None, reason="git or bash is not installed"
)

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
EVENT_TYPES = {"system", "assistant", "user", "result"}
PR_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/pull/(\d+)$")
PROPOSAL = re.compile(r"```ouroboros-proposal\n(.*?)```", re.S)
CORPUS_KINDS = {"jsonl", "issue", "pull_request", "file_at"}
MERGER_TRAILER = re.compile(r"^CSF-Session: ouroboros-merger/\d+$", re.M)

# Seconds from a run's first line to the tool_result of its first successful `gh pr create --draft`.
DRAFT_PR_SECONDS = {
    "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14": 302,
    "9d41b7a3-0e5f-4a82-b6c9-3f7e1d2a5c60": None,
    "c7e2a9f4-3b18-4d6e-8f50-6a2d9b1e4c37": 1259,
    "4b9f0e6c-8d27-4a13-b5e1-7c3f2a9d6b58": 468,
    "e1a6d3b8-5c94-4f27-8a0e-9d2b6f4c1a73": 3089,
    "7a2c5f9e-1d3b-4e8a-9c64-0f5b3e7d2a19": None,
    "b5d8e3c1-4f6a-4b29-8d07-2e9c1a5f3b86": 185,
    "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41": 1710,
    "d2f0a8c6-7e3b-4c51-9b28-1a4e6d0f3c95": None,
}


def when(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(UTC)


def run_ids() -> list[str]:
    return sorted(p.name for p in RUNS.iterdir() if p.is_dir())


def lines(run_id: str) -> list[dict[str, Any]]:
    text = (RUNS / run_id / "events.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def events(run_id: str, kind: str) -> list[dict[str, Any]]:
    return [line["event"] for line in lines(run_id) if line["event_type"] == kind]


def tool_uses(run_id: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for i, line in enumerate(lines(run_id)):
        if line["event_type"] == "assistant":
            out += [(i, b) for b in line["event"]["message"]["content"] if b["type"] == "tool_use"]
    return out


def tool_results(run_id: str) -> dict[str, tuple[int, dict[str, Any]]]:
    out = {}
    for i, line in enumerate(lines(run_id)):
        if line["event_type"] == "user" and isinstance(line["event"]["message"]["content"], list):
            for block in line["event"]["message"]["content"]:
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = (i, block)
    return out


def bash_calls(run_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(command, tool_result block) for every Bash call, in order."""
    results = tool_results(run_id)
    return [(b["input"]["command"], results[b["id"]][1]) for _, b in tool_uses(run_id) if b["name"] == "Bash"]


def draft_pr_seconds(run_id: str) -> int | None:
    rows = lines(run_id)
    start = when(rows[0]["ts"])
    results = tool_results(run_id)
    for _, block in tool_uses(run_id):
        if block["name"] == "Bash" and "gh pr create --draft" in block["input"]["command"]:
            i, result = results[block["id"]]
            if not result["is_error"] and PR_URL.match(result["content"].strip()):
                return int((when(rows[i]["ts"]) - start).total_seconds())
    return None


def score(run_id: str) -> int:
    """draft-pr-late's score: seconds to the first draft pull request, else to the last line."""
    s = draft_pr_seconds(run_id)
    if s is not None:
        return s
    rows = lines(run_id)
    return int((when(rows[-1]["ts"]) - when(rows[0]["ts"])).total_seconds())


def processes(run_id: str) -> list[list[float]]:
    """total_cost_usd of each result, grouped by process (a process starts at a system init line)."""
    out: list[list[float]] = []
    for line in lines(run_id):
        ev = line["event"]
        if ev["type"] == "system" and ev.get("subtype") == "init":
            out.append([])
        elif ev["type"] == "result":
            out[-1].append(ev["total_cost_usd"])
    return out


def fold_costs(costs: list[float]) -> float:
    """The design's cost folding: the sum, over maximal non-decreasing runs, of each run's maximum."""
    total, current = 0.0, None
    for c in costs:
        if current is not None and c < current:
            total += current
        current = c
    return total + (current or 0.0)


def h_r(run_id: str) -> float:
    read = total = 0
    for ev in events(run_id, "result"):
        u = ev["usage"]
        read += u["cache_read_input_tokens"]
        total += u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
    return read / total


def labels() -> list[list[str]]:
    return [row.split("\t") for row in (EX / "labels.tsv").read_text().splitlines()]


def forge(kind: str) -> dict[int, dict[str, Any]]:
    items = [json.loads(p.read_text()) for p in sorted((EX / "forge" / kind).glob("*.json"))]
    return {item["number"]: item for item in items}


def latest_proposal(ticket: dict[str, Any]) -> str | None:
    m = PROPOSAL.search(ticket["comments"][-1]["body"]) if ticket["comments"] else None
    return m.group(1) if m else None


def git_env(home: Path) -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(home)}


def git(*args: str, cwd: Path, home: Path) -> str:
    assert GIT is not None
    done = subprocess.run(
        [GIT, *args], cwd=cwd, env=git_env(home), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GIT is None:
        pytest.skip("git is not installed")
    base = tmp_path_factory.mktemp("shop")
    git("clone", "-q", str(EX / "repo.bundle"), "shop", cwd=base, home=base)
    return base / "shop"


def resolve(repo: Path, rev: str) -> str | None:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=repo,
        env=git_env(repo),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


# --------------------------------------------------------------------------- runs


def test_at_least_eight_runs_of_reasonable_size() -> None:
    ids = run_ids()
    assert len(ids) >= 8
    for run_id in ids:
        assert str(uuid.UUID(run_id)) == run_id
        assert 15 <= len(lines(run_id)) <= 80, run_id
    assert set(ids) == set(DRAFT_PR_SECONDS)


@pytest.mark.parametrize("run_id", run_ids())
def test_every_line_is_an_envelope(run_id: str) -> None:
    raw = (RUNS / run_id / "events.jsonl").read_text(encoding="utf-8")
    assert raw.endswith("\n")
    previous = None
    for n, text in enumerate(raw.splitlines(), 1):
        line = json.loads(text)
        assert isinstance(line, dict), n
        assert set(line) == {"ts", "event_type", "event"}, n
        assert TS.match(line["ts"]), (n, line["ts"])
        assert line["event_type"] in EVENT_TYPES, n
        assert line["event"]["type"] == line["event_type"], n
        assert line["event"]["session_id"] == run_id, n
        t = when(line["ts"])
        assert datetime(2026, 9, 20, tzinfo=UTC) <= t <= datetime(2026, 10, 10, tzinfo=UTC), n
        assert previous is None or t >= previous, n
        previous = t


@pytest.mark.parametrize("run_id", run_ids())
def test_stream_json_shapes(run_id: str) -> None:
    rows = lines(run_id)
    first = rows[0]["event"]
    assert first["type"] == "system" and first["subtype"] == "init"
    for init in events(run_id, "system"):
        for key in ("session_id", "model", "tools", "cwd", "permissionMode", "claude_code_version", "uuid"):
            assert key in init, key
    seen: set[str] = set()
    for ev in events(run_id, "assistant"):
        msg = ev["message"]
        assert msg["role"] == "assistant" and msg["id"].startswith("msg_")
        assert {
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        } <= set(msg["usage"])
        for block in msg["content"]:
            assert block["type"] in {"text", "tool_use"}
            if block["type"] == "tool_use":
                assert block["id"].startswith("toolu_") and block["id"] not in seen
                assert isinstance(block["name"], str) and isinstance(block["input"], dict)
                seen.add(block["id"])
    results = tool_results(run_id)
    assert set(results) == seen, "every tool_use has exactly one tool_result"
    uses = {b["id"]: i for i, b in tool_uses(run_id)}
    for tool_id, (i, block) in results.items():
        assert i > uses[tool_id]
        assert isinstance(block["content"], str) and isinstance(block["is_error"], bool)
    uuids = [line["event"]["uuid"] for line in rows]
    assert len(set(uuids)) == len(uuids)


@pytest.mark.parametrize("run_id", run_ids())
def test_every_run_has_a_result_with_usage(run_id: str) -> None:
    results = events(run_id, "result")
    assert results
    assert lines(run_id)[-1]["event_type"] == "result"
    for ev in results:
        for key in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ):
            assert isinstance(ev["usage"][key], int) and ev["usage"][key] >= 0, key
        assert isinstance(ev["total_cost_usd"], float) and ev["total_cost_usd"] > 0
        assert isinstance(ev["num_turns"], int) and ev["num_turns"] >= 1
        assert isinstance(ev["duration_ms"], int) and isinstance(ev["is_error"], bool)
        assert ev["subtype"] in {"success", "error_max_turns", "error_during_execution"}
        assert ev["is_error"] == (ev["subtype"] != "success")
        assert isinstance(ev["permission_denials"], list)


def test_cost_is_cumulative_within_a_process_and_restarts_when_reopened() -> None:
    multi_result = reopened_lower = 0
    for run_id in run_ids():
        procs = processes(run_id)
        assert all(procs), f"{run_id}: a process without a result"
        for costs in procs:
            assert costs == sorted(costs), f"{run_id}: total_cost_usd decreased within a process"
            multi_result += len(costs) > 1
        for before, after in itertools.pairwise(procs):
            assert after[0] < before[-1], f"{run_id}: a reopened process must restart lower"
            reopened_lower += 1
        # The design's folding rule agrees with folding by process boundaries on this corpus.
        by_process = sum(costs[-1] for costs in procs)
        assert fold_costs([c for costs in procs for c in costs]) == pytest.approx(by_process)
    assert multi_result >= 1
    assert reopened_lower >= 1


def test_draft_pull_request_timings() -> None:
    assert {run_id: draft_pr_seconds(run_id) for run_id in run_ids()} == DRAFT_PR_SECONDS
    timings = sorted(s for s in DRAFT_PR_SECONDS.values() if s is not None)
    for target in (300, 470, 1260, 3090):
        assert any(abs(s - target) <= 5 for s in timings), target
    assert any(s is None for s in DRAFT_PR_SECONDS.values())


def test_sleep_poll_loop() -> None:
    found = []
    for run_id in run_ids():
        commands = [c for c, _ in bash_calls(run_id)]
        polls = [c for c in commands if re.search(r"sleep \d+; gh run view", c)]
        loops = [c for c in commands if "while true" in c and "sleep" in c]
        if len(polls) >= 3 and loops:
            found.append(run_id)
    assert found


def test_self_matching_pkill() -> None:
    found = []
    for run_id in run_ids():
        for command, result in bash_calls(run_id):
            m = re.search(r'pkill -f "([^"]+)"', command)
            if m and result["is_error"] and result["content"].startswith("Exit code 143"):
                found.append(run_id)
        pgreps = [r["content"] for c, r in bash_calls(run_id) if 'pgrep -f "pytest -k slow"' in c]
        if len(pgreps) >= 3:
            assert len(set(pgreps)) == len(pgreps), "each pgrep matches a new shell, so a new pid"
    assert found


def test_the_same_failing_command_repeated() -> None:
    longest: Counter[str] = Counter()
    for run_id in run_ids():
        streak, last = 0, None
        results = tool_results(run_id)
        for _, block in tool_uses(run_id):
            key = json.dumps([block["name"], block["input"]], sort_keys=True)
            failed = results[block["id"]][1]["is_error"]
            streak = streak + 1 if failed and key == last else int(failed)
            last = key if failed else None
            longest[run_id] = max(longest[run_id], streak)
    assert max(longest.values()) >= 3


def test_prompt_cache_ratios_vary() -> None:
    ratios = {run_id: h_r(run_id) for run_id in run_ids()}
    assert sum(r < 0.5 for r in ratios.values()) >= 1
    assert sum(r > 0.95 for r in ratios.values()) >= 5


def test_permission_denial() -> None:
    denials = []
    for run_id in run_ids():
        results = tool_results(run_id)
        for ev in events(run_id, "result"):
            for d in ev["permission_denials"]:
                assert {"tool_name", "tool_use_id", "tool_input"} <= set(d)
                assert results[d["tool_use_id"]][1]["is_error"]
                denials.append(d)
    assert denials


# --------------------------------------------------------------------------- labels


def test_labels_are_well_formed_and_name_existing_runs() -> None:
    rows = labels()
    assert rows
    starts = []
    for row in rows:
        assert len(row) == 5, row
        instance, sign, start, flagged, source = row
        assert (RUNS / instance / "events.jsonl").is_file(), instance
        assert sign in {"+", "-"}
        assert TS.match(start) and start == lines(instance)[0]["ts"]
        assert (flagged == "-") == (sign == "-")
        if flagged != "-":
            assert TS.match(flagged) and when(flagged) > when(start)
        assert source
        starts.append(when(start))
    assert starts == sorted(starts)
    assert len({row[0] for row in rows}) == len(rows)
    assert {row[1] for row in rows} == {"+", "-"}


def test_labels_separate_by_score_and_flags_come_after_the_knee() -> None:
    rows = labels()
    positives = [score(r[0]) for r in rows if r[1] == "+"]
    negatives = [score(r[0]) for r in rows if r[1] == "-"]
    knee = max(negatives)
    assert min(positives) > knee
    for instance, sign, start, flagged, _ in rows:
        if sign == "+":
            assert (when(flagged) - when(start)).total_seconds() > knee, instance


# --------------------------------------------------------------------------- forge


def test_tickets_are_well_formed() -> None:
    tickets = forge("tickets")
    assert len(tickets) >= 4
    keys = {"number", "title", "body", "state", "labels", "created_at", "comments"}
    for number, t in tickets.items():
        assert set(t) == keys and (EX / "forge" / "tickets" / f"{number}.json").is_file()
        assert t["state"] in {"open", "closed"}
        assert TS.match(t["created_at"])
        previous = when(t["created_at"])
        for c in t["comments"]:
            assert set(c) == {"id", "author", "created_at", "body"}
            assert when(c["created_at"]) >= previous
            previous = when(c["created_at"])
        if "mining" in t["labels"]:
            assert latest_proposal(t) is not None, number


def test_proposals_cover_the_pre_check_cases(shop: Path) -> None:
    tickets = forge("tickets")
    pulls = forge("pulls")
    runs = set(run_ids())
    kinds = Counter()
    for number, t in tickets.items():
        block = latest_proposal(t)
        if block is None:
            continue
        try:
            p = tomllib.loads(block)
        except tomllib.TOMLDecodeError:
            kinds["malformed"] += 1
            continue
        assert {"miner", "corpus", "instances", "predicate", "facts", "labels"} <= set(p)
        assert set(p["corpus"]) <= CORPUS_KINDS and p["corpus"]
        assert "`" in p["predicate"]
        assert all(isinstance(f, str) and ":-" in f for f in p["facts"])
        assert all(len(lab) == 2 and lab[1] in {"+", "-"} for lab in p["labels"])
        assert {lab[0] for lab in p["labels"]} <= set(p["instances"])

        def exists(instance: str, corpus: list[str], ticket: int = number) -> bool:
            if "jsonl" in corpus and instance in runs:
                return True
            ref = re.fullmatch(r"#(\d+)", instance)
            if ref and {"issue", "pull_request"} & set(corpus):
                n = int(ref.group(1))
                return n != ticket and (n in tickets or n in pulls)
            return "file_at" in corpus and resolve(shop, instance) is not None

        real = [i for i in p["instances"] if exists(i, p["corpus"])]
        if real == p["instances"]:
            kinds["real"] += 1
        elif p["instances"] == [f"#{number}"]:
            kinds["self"] += 1
        elif not real:
            kinds["nonexistent"] += 1
    assert kinds["real"] >= 1
    assert kinds["nonexistent"] >= 1
    assert kinds["self"] >= 1
    assert kinds["malformed"] >= 1


def test_pull_requests_are_well_formed_and_cover_the_merge_train() -> None:
    pulls = forge("pulls")
    assert len(pulls) >= 4
    keys = {
        "number",
        "title",
        "body",
        "state",
        "draft",
        "labels",
        "created_at",
        "base",
        "head_sha",
        "author",
        "commits",
        "checks",
    }
    for number, pr in pulls.items():
        assert set(pr) == keys, number
        assert pr["state"] in {"open", "closed", "merged"}
        assert pr["head_sha"] == pr["commits"][-1]["sha"]
        for c in pr["commits"]:
            assert re.fullmatch(r"[0-9a-f]{40}", c["sha"])
            assert re.search(r"^CSF-Session: \S+$", c["message"], re.M), (number, c["sha"])
        for check in pr["checks"]:
            assert set(check) == {"name", "command", "exit_code"}
    merger = [n for n, pr in pulls.items() if any(MERGER_TRAILER.search(c["message"]) for c in pr["commits"])]
    assert merger
    assert any("LANG" in pr["labels"] for pr in pulls.values())
    assert any(pr["draft"] for pr in pulls.values())
    assert any(
        not pr["draft"] and pr["state"] == "open" and any(c["exit_code"] for c in pr["checks"])
        for pr in pulls.values()
    )
    assert any("| Backtest FN | 0 |" in pr["body"] for pr in pulls.values())
    closable = [
        n
        for n, pr in pulls.items()
        if pr["state"] == "merged"
        and "| Backtest FN | 0 |" in pr["body"]
        and all(c["exit_code"] == 0 for c in pr["checks"])
    ]
    assert closable


def test_pull_requests_match_the_runs_that_opened_them() -> None:
    pulls = forge("pulls")
    for number, pr in pulls.items():
        session = re.search(r"^CSF-Session: (\S+)$", pr["commits"][0]["message"], re.M)
        assert session is not None
        run_id = session.group(1)
        assert run_id in DRAFT_PR_SECONDS, number
        seconds = draft_pr_seconds(run_id)
        assert seconds is not None
        opened = [r["content"] for c, r in bash_calls(run_id) if "gh pr create --draft" in c]
        assert opened[0].endswith(f"/pull/{number}")
        start = when(lines(run_id)[0]["ts"])
        assert (when(pr["created_at"]) - start).total_seconds() == seconds
        model = re.search(r"^CSF-Model: (\S+)$", pr["commits"][0]["message"], re.M)
        assert model is not None and model.group(1) == events(run_id, "system")[0]["model"]


# --------------------------------------------------------------------------- repository and pushes


def pushes() -> list[dict[str, str]]:
    return [json.loads(line) for line in (EX / "pushes.jsonl").read_text().splitlines()]


def test_pushes_name_commits_in_the_bundle(shop: Path) -> None:
    rows = pushes()
    assert len(rows) >= 3
    for row in rows:
        assert set(row) == {"repo", "ref", "base", "head"}
        assert row["repo"] == "example/shop" and row["ref"] == "refs/heads/main"
        for key in ("base", "head"):
            assert re.fullmatch(r"[0-9a-f]{40}", row[key])
            assert resolve(shop, row[key]) == row[key]
        git("merge-base", "--is-ancestor", row["base"], row["head"], cwd=shop, home=shop)
    for before, after in itertools.pairwise(rows):
        assert after["base"] == before["head"]
    assert rows[-1]["head"] == git("rev-parse", "HEAD", cwd=shop, home=shop).strip()


def test_the_vulnerable_push_and_the_fix(shop: Path) -> None:
    rows = pushes()
    diff = git("diff", rows[1]["base"], rows[1]["head"], cwd=shop, home=shop)
    assert "shell=True" in diff and "WHERE name LIKE '%{term}%'" in diff
    assert 'os.path.join(current_app.config["INVOICE_DIR"], name)' in diff and "innerHTML" in diff
    fix = git("diff", rows[2]["base"], rows[2]["head"], cwd=shop, home=shop)
    assert "-        f\"WHERE name LIKE '%{term}%' ORDER BY name\"" in fix
    identities = git("log", "--format=%an <%ae>|%cn <%ce>", "main", cwd=shop, home=shop).splitlines()
    assert set(identities) == {"Shop Developer <dev@example.invalid>|Shop Developer <dev@example.invalid>"}


@needs_git
def test_make_repo_reproduces_the_bundle(tmp_path: Path) -> None:
    env = git_env(tmp_path)
    done = subprocess.run(
        ["bash", str(EX / "make_repo.sh"), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "pushes.jsonl").read_text() == (EX / "pushes.jsonl").read_text()

    def heads(bundle: Path) -> str:
        return git("bundle", "list-heads", str(bundle), cwd=tmp_path, home=tmp_path)

    assert heads(tmp_path / "out" / "repo.bundle") == heads(EX / "repo.bundle")


def test_generate_reproduces_the_corpus(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EX / "generate.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert written
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (EX / rel).read_bytes(), rel
    committed = {p.relative_to(EX) for p in (EX / "runs").rglob("*") if p.is_file()}
    committed |= {p.relative_to(EX) for p in (EX / "forge").rglob("*") if p.is_file()}
    assert committed <= set(written)


def test_readme_table_matches_the_runs() -> None:
    """Each run row of examples/README.md: tool calls, errors, folded cost and draft-PR seconds."""
    readme = (EX / "README.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| `([0-9a-f-]{36})` \|.*\| (\d+) \| (\d+) \| ([0-9.]+) \| ([^|]+) \|$", readme, re.M
    )
    assert {r[0] for r in rows} == set(run_ids())
    for run_id, calls, errors, cost, draft in rows:
        uses = tool_uses(run_id)
        results = tool_results(run_id)
        assert int(calls) == len(uses), run_id
        assert int(errors) == sum(results[b["id"]][1]["is_error"] for _, b in uses), run_id
        assert float(cost) == pytest.approx(sum(costs[-1] for costs in processes(run_id))), run_id
        seconds = draft_pr_seconds(run_id)
        assert draft.strip() == (str(seconds) if seconds is not None else f"never ({score(run_id)})"), run_id
