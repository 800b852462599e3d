"""Write the example corpus: harness runs, draft-pr-late labels, forge tickets and pull requests.

    python examples/generate.py [OUT]        # OUT defaults to examples/

Everything is derived from the scenarios below, deterministically: ids are hashes of the run id and
a counter, token counts follow from the text each call reads and writes, and every ``total_cost_usd``
is the priced sum of the usage before it. Run ``bash examples/make_repo.sh`` first: ticket #53 names
a commit of the example repository, read from ``pushes.jsonl``.

The runs are Claude Code ``--output-format stream-json`` lines wrapped in the harness envelope
``{"ts", "event_type", "event"}``. The harness passes its run id as ``--session-id`` (and ``--resume``
when it reopens a process), so ``session_id`` is the run id.
"""

from __future__ import annotations

import hashlib
import json
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = "example/csf"
FORGE = f"https://github.com/{REPO}"
MERGER = "ouroboros-merger/4242"

OPUS = "claude-opus-4-5-20251101"
SONNET = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"

# USD per token: input, cache write (5 minutes), cache read, output.
PRICES = {
    OPUS: (Decimal("5e-6"), Decimal("6.25e-6"), Decimal("0.5e-6"), Decimal("25e-6")),
    SONNET: (Decimal("3e-6"), Decimal("3.75e-6"), Decimal("0.3e-6"), Decimal("15e-6")),
    HAIKU: (Decimal("1e-6"), Decimal("1.25e-6"), Decimal("0.1e-6"), Decimal("5e-6")),
}
CACHE_TTL_S = 300

FIXER_TOOLS = ["Task", "TaskOutput", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite", "KillShell"]
LOOP_TOOLS = ["Bash", "Glob", "Grep", "Read"]

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def h(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


def b62(raw: bytes, n: int) -> str:
    v = int.from_bytes(raw, "big")
    out = []
    for _ in range(n):
        v, r = divmod(v, 62)
        out.append(B62[r])
    return "".join(out)


def uid(*parts: object) -> str:
    return str(uuid.UUID(bytes=h(*parts)[:16], version=4))


def rfc3339(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def at(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def tokens(text: str) -> int:
    return 8 + len(text) * 10 // 36


def usd(d: Decimal) -> float:
    return float(format(d.normalize(), "f"))


# --------------------------------------------------------------------------- tool calls


@dataclass
class Tool:
    name: str
    input: dict[str, Any]
    dur: int  # seconds from the tool_use line to its tool_result line
    content: str
    is_error: bool = False
    result: Any = None  # the stream's tool_use_result; filled from the tool when None
    denied: bool = False  # a permission denial (listed in the result's permission_denials)


def bash(cmd: str, desc: str, dur: int, out: str, err: bool = False, code: int = 1, **extra: Any) -> Tool:
    inp: dict[str, Any] = {"command": cmd, "description": desc, **extra}
    if err:
        content = f"Exit code {code}\n{out}" if out else f"Exit code {code}"
        return Tool("Bash", inp, dur, content, True, f"Error: {content}")
    return Tool("Bash", inp, dur, out, False, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})


def bash_bg(cmd: str, desc: str, task: str) -> Tool:
    inp = {"command": cmd, "description": desc, "run_in_background": True}
    res = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": task}
    return Tool("Bash", inp, 1, f"Command running in background with ID: {task}", False, res)


def denied(cmd: str, desc: str) -> Tool:
    msg = "Claude requested permissions to use Bash, but you haven't granted it yet."
    return Tool("Bash", {"command": cmd, "description": desc}, 0, msg, True, f"Error: {msg}", denied=True)


def gate(cmd: str, desc: str, reason: str) -> Tool:
    msg = f"PreToolUse:Bash hook error: [/srv/csf/bin/csf-gate pre-tool-use]: {reason}"
    return Tool("Bash", {"command": cmd, "description": desc}, 1, msg, True, f"Error: {msg}")


def read(path: str, text: str) -> Tool:
    lines = text.split("\n")
    numbered = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, 1))
    res = {
        "type": "text",
        "file": {"filePath": path, "content": text, "numLines": len(lines), "startLine": 1,
                 "totalLines": len(lines)},
    }
    return Tool("Read", {"file_path": path}, 0, numbered, False, res)


def write(path: str, text: str) -> Tool:
    res = {"type": "create", "filePath": path, "content": text, "structuredPatch": []}
    return Tool("Write", {"file_path": path, "content": text}, 0, f"File created successfully at: {path}", False, res)


def edit(path: str, old: str, new: str, *, line: int = 1) -> Tool:
    inp = {"file_path": path, "old_string": old, "new_string": new}
    snippet = "\n".join(f"{i:>6}\u2192{s}" for i, s in enumerate(new.split("\n"), line))
    content = (
        f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the "
        f"edited file:\n{snippet}"
    )
    old_lines, new_lines = old.split("\n"), new.split("\n")
    patch = [{
        "oldStart": line, "oldLines": len(old_lines), "newStart": line, "newLines": len(new_lines),
        "lines": [f"-{s}" for s in old_lines] + [f"+{s}" for s in new_lines],
    }]
    res = {"filePath": path, "oldString": old, "newString": new, "structuredPatch": patch,
           "userModified": False, "replaceAll": False}
    return Tool("Edit", inp, 0, content, False, res)


def edit_miss(path: str, old: str, new: str) -> Tool:
    msg = f"String to replace not found in file.\nString: {old}"
    return Tool("Edit", {"file_path": path, "old_string": old, "new_string": new}, 0,
                f"<tool_use_error>{msg}</tool_use_error>", True, f"Error: {msg}")


def grep(pattern: str, path: str, files: list[str]) -> Tool:
    content = f"Found {len(files)} file{'s' if len(files) != 1 else ''}\n" + "\n".join(files) if files \
        else "No files found"
    res = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
    return Tool("Grep", {"pattern": pattern, "path": path, "output_mode": "files_with_matches"}, 0, content,
                False, res)


def glob(pattern: str, files: list[str]) -> Tool:
    res = {"filenames": files, "durationMs": 9, "numFiles": len(files), "truncated": False}
    return Tool("Glob", {"pattern": pattern}, 0, "\n".join(files), False, res)


# --------------------------------------------------------------------------- runs


@dataclass
class Call:
    t: int
    text: str | None = None
    tools: list[Tool] = field(default_factory=list)


@dataclass
class Turn:
    calls: list[Call]
    result_at: int
    subtype: str = "success"
    user: tuple[int, str] | None = None  # a follow-up message on stdin (stream-json input), replayed


@dataclass
class Process:
    t: int  # the init line
    turns: list[Turn]
    prompt: str = ""


def proc(t: int, calls: list[Call], result_at: int, subtype: str = "success", prompt: str = "") -> Process:
    """One claude process with one turn: init, the calls, one result."""
    return Process(t, [Turn(calls, result_at, subtype)], prompt)


@dataclass
class Run:
    run_id: str
    start: str
    model: str
    cwd: str
    procs: list[Process]
    permission_mode: str = "acceptEdits"
    version: str = "2.1.248"
    tools: list[str] = field(default_factory=lambda: list(FIXER_TOOLS))
    cold_cache: bool = False  # the prompt starts with a timestamp: only the tool block is ever reused
    summary: str = ""
    draft_pr: int | None = None  # the pull request number the run opened as a draft


def base_tokens(run: Run) -> tuple[int, int]:
    """(system prompt and tool definitions, the part of it shared with other sessions in the cache)."""
    n = 6200 + 1800 * len(run.tools)
    return n, 310 * len(run.tools) if run.cold_cache else n - 2900


class Builder:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.t0 = at(run.start)
        self.lines: list[dict[str, Any]] = []
        self.n = 0
        self.ctx = 0
        self.last_call: int | None = None
        self.total_tool_calls = 0
        self.total_errors = 0
        self.folded_cost = Decimal(0)
        self.result_costs: list[float] = []
        self.draft_pr_at: int | None = None

    def _id(self, prefix: str, n: int) -> str:
        self.n += 1
        return prefix + b62(h(self.run.run_id, prefix, self.n), n)

    def _uuid(self) -> str:
        self.n += 1
        return uid(self.run.run_id, "line", self.n)

    def emit(self, t: int, event: dict[str, Any]) -> None:
        ts = rfc3339(self.t0 + timedelta(seconds=t))
        if self.lines:
            assert ts >= self.lines[-1]["ts"], (self.run.run_id, ts, event)
        self.lines.append({"ts": ts, "event_type": event["type"], "event": event})

    def build(self) -> list[dict[str, Any]]:
        run = self.run
        sid = run.run_id
        base, _ = base_tokens(run)
        for proc in run.procs:
            self.emit(proc.t, {
                "type": "system", "subtype": "init", "cwd": run.cwd, "session_id": sid,
                "tools": run.tools, "mcp_servers": [], "model": run.model,
                "permissionMode": run.permission_mode,
                "slash_commands": ["compact", "context", "cost", "init", "review"],
                "apiKeySource": "none", "claude_code_version": run.version, "output_style": "default",
                "agents": ["general-purpose", "Explore", "Plan"], "skills": [], "plugins": [],
                "uuid": self._uuid(),
            })
            pending = tokens(proc.prompt) if self.ctx else 0  # tokens added since the last call
            if self.ctx == 0:
                self.ctx = base + tokens(proc.prompt)
            cum = {"in": 0, "cc": 0, "cr": 0, "out": 0, "cost": Decimal(0)}
            haiku = {"in": 0, "out": 0, "cost": Decimal(0)}
            prev_t = proc.t
            for turn_spec in proc.turns:
                pending, prev_t = self.turn(proc, turn_spec, cum, haiku, pending, prev_t)
        return self.lines

    def turn(self, proc: Process, spec: Turn, cum: dict[str, Any], haiku: dict[str, Any], pending: int,
             prev_t: int) -> tuple[int, int]:
        run = self.run
        sid = run.run_id
        _, shared = base_tokens(run)
        turn = {"in": 0, "cc": 0, "cr": 0, "out": 0, "api_ms": 0, "calls": 0}
        denials: list[dict[str, Any]] = []
        last_text = ""
        turn_start = proc.t
        if spec.user is not None:
            turn_start, text = spec.user
            self.emit(turn_start, {
                "type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]},
                "parent_tool_use_id": None, "session_id": sid, "uuid": self._uuid(),
            })
            pending += tokens(text)
        for i, call in enumerate(spec.calls):
            final = i == len(spec.calls) - 1
            out_chars = len(call.text or "") + sum(len(json.dumps(tl.input)) for tl in call.tools)
            out = 60 + out_chars * 10 // 30
            self.ctx += pending
            expired = self.last_call is None or call.t - self.last_call > CACHE_TTL_S
            cr = shared if run.cold_cache or expired else self.ctx - pending
            inp = 1 + int.from_bytes(h(sid, "in", self.n), "big") % 7
            cc = self.ctx - cr - inp
            self.last_call = call.t
            api_ms = min(1400 + out * 22 + cc // 40, max(800, (call.t - prev_t) * 1000 - 200))
            for k, v in (("in", inp), ("cc", cc), ("cr", cr), ("out", out)):
                turn[k] += v
                cum[k] += v
            turn["api_ms"] += api_ms
            turn["calls"] += 1
            p_in, p_cw, p_cr, p_out = PRICES[run.model]
            cum["cost"] += inp * p_in + cc * p_cw + cr * p_cr + out * p_out
            snapshot = {
                "input_tokens": inp, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr,
                "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
                "output_tokens": min(out, 1 + out % 9), "service_tier": "standard",
            }
            mid = self._id("msg_01", 22)
            blocks: list[dict[str, Any]] = []
            if call.text is not None:
                blocks.append({"type": "text", "text": call.text})
                last_text = call.text
            ids = []
            for tl in call.tools:
                tid = self._id("toolu_01", 22)
                ids.append(tid)
                blocks.append({"type": "tool_use", "id": tid, "name": tl.name, "input": tl.input})
            for j, block in enumerate(blocks):
                stop = "end_turn" if final and j == len(blocks) - 1 and not call.tools else None
                self.emit(call.t, {
                    "type": "assistant",
                    "message": {
                        "model": run.model, "id": mid, "type": "message", "role": "assistant",
                        "content": [block], "stop_reason": stop, "stop_sequence": None,
                        "usage": snapshot, "context_management": None,
                    },
                    "parent_tool_use_id": None, "session_id": sid, "uuid": self._uuid(),
                })
            pending = out
            for tid, tl in zip(ids, call.tools, strict=True):
                self.total_tool_calls += 1
                self.total_errors += tl.is_error
                if tl.name == "Bash" and run.model != HAIKU:
                    haiku["in"] += 380 + len(tl.input["command"]) // 4
                    haiku["out"] += 9
                if tl.denied:
                    denials.append({"tool_name": tl.name, "tool_use_id": tid, "tool_input": tl.input})
                self.emit(call.t + tl.dur, {
                    "type": "user",
                    "message": {"role": "user", "content": [
                        {"tool_use_id": tid, "type": "tool_result", "content": tl.content,
                         "is_error": tl.is_error},
                    ]},
                    "parent_tool_use_id": None, "session_id": sid, "uuid": self._uuid(),
                    "tool_use_result": tl.result,
                })
                if (tl.name == "Bash" and "gh pr create --draft" in tl.input["command"]
                        and not tl.is_error and self.draft_pr_at is None):
                    self.draft_pr_at = call.t + tl.dur
                pending += tokens(tl.content)
            prev_t = max([call.t] + [call.t + tl.dur for tl in call.tools])
        assert not spec.calls[-1].tools, "a turn ends on a text-only answer"
        haiku["cost"] = haiku["in"] * PRICES[HAIKU][0] + haiku["out"] * PRICES[HAIKU][3]
        total = cum["cost"] + haiku["cost"]
        model_usage = {run.model: {
            "inputTokens": cum["in"], "outputTokens": cum["out"], "cacheReadInputTokens": cum["cr"],
            "cacheCreationInputTokens": cum["cc"], "webSearchRequests": 0, "costUSD": usd(cum["cost"]),
            "contextWindow": 200000, "maxOutputTokens": 64000,
        }}
        if haiku["in"]:
            model_usage[HAIKU] = {
                "inputTokens": haiku["in"], "outputTokens": haiku["out"], "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0, "webSearchRequests": 0, "costUSD": usd(haiku["cost"]),
                "contextWindow": 200000, "maxOutputTokens": 64000,
            }
        is_error = spec.subtype != "success"
        result: dict[str, Any] = {
            "type": "result", "subtype": spec.subtype, "is_error": is_error,
            "duration_ms": (spec.result_at - turn_start) * 1000 + 412,
            "duration_api_ms": turn["api_ms"], "num_turns": turn["calls"],
        }
        if not is_error:
            result["result"] = last_text
        result.update({
            "session_id": sid, "total_cost_usd": usd(total),
            "usage": {
                "input_tokens": turn["in"], "cache_creation_input_tokens": turn["cc"],
                "cache_read_input_tokens": turn["cr"], "output_tokens": turn["out"],
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": turn["cc"]},
            },
            "modelUsage": model_usage, "permission_denials": denials, "uuid": self._uuid(),
        })
        self.emit(spec.result_at, result)
        self.result_costs.append(usd(total))
        if spec is proc.turns[-1]:
            self.folded_cost += Decimal(str(usd(total)))
        return pending, prev_t


# --------------------------------------------------------------------------- scenarios

R01 = "2f8c4d1e-6a3b-4c7d-9e21-5b0a7f3c8d14"
R02 = "9d41b7a3-0e5f-4a82-b6c9-3f7e1d2a5c60"
R03 = "c7e2a9f4-3b18-4d6e-8f50-6a2d9b1e4c37"
R04 = "4b9f0e6c-8d27-4a13-b5e1-7c3f2a9d6b58"
R05 = "e1a6d3b8-5c94-4f27-8a0e-9d2b6f4c1a73"
R06 = "7a2c5f9e-1d3b-4e8a-9c64-0f5b3e7d2a19"
R07 = "b5d8e3c1-4f6a-4b29-8d07-2e9c1a5f3b86"
R08 = "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"
R09 = "d2f0a8c6-7e3b-4c51-9b28-1a4e6d0f3c95"

# Runs outside this corpus that the fixers use as miner fixtures (they are in <state> on the host).
OLD_A = "0e4d7a92-5b1c-4f38-9a6e-3c2b8d1f7e05"
OLD_B = "8c3f1b6e-2a7d-4e90-b5c4-6f1e9a0d2b77"
# Instances a proposal named that no run has.
GHOST_A = "5a0e2c7b-93d1-4f6a-8b2e-7c4d1f9a0b33"
GHOST_B = "e8b1d4f2-0c6a-4e93-a7d5-2b9f3c6e8a10"


def worktree(name: str, run_id: str) -> str:
    return f"/srv/csf/worktrees/miner-{name}-{run_id[:4]}"


def commit_push(name: str, run_id: str, subject: str, model: str, dur: int = 6) -> Tool:
    branch = f"miner/{name}-{run_id[:4]}"
    cmd = (f'git add -A && git commit -q -m "{subject}" -m "CSF-Session: {run_id}" -m "CSF-Model: {model}" '
           f"&& git push -u origin {branch}")
    out = (f"remote: \nremote: Create a pull request for '{branch}' on GitHub by visiting:\n"
           f"remote:      {FORGE}/pull/new/{branch}\nremote: \n"
           f"To github.com:{REPO}.git\n * [new branch]      {branch} -> {branch}\n"
           f"branch '{branch}' set up to track 'origin/{branch}'.")
    return bash(cmd, "Commit with session trailers and push the branch", dur, out)


def draft_pr(title: str, number: int, dur: int = 4) -> Tool:
    cmd = f'gh pr create --draft --base main --title "{title}" --body-file /tmp/pr-body.md'
    return bash(cmd, "Open a draft pull request", dur, f"{FORGE}/pull/{number}")


def pr_ready(number: int) -> Tool:
    return bash(f"gh pr ready {number}", "Mark the pull request ready for review", 2,
                f'\u2713 Pull request {REPO}#{number} is marked as "ready for review"')


def check_merge(dur: int, lines: list[str]) -> Tool:
    return bash("bash tools/check-merge.sh", "Run the merge gate locally", dur, "\n".join(lines))


def pytest_ok(target: str, dur: int, summary: str, extra: str = "") -> Tool:
    return bash(f"python -m pytest {target} -q{extra}", "Run the miner's tests", dur, summary)


TEMPLATE_EXTRACT = '''"""draft-pr-late: a run whose work stays invisible (no draft pull request) past the knee."""

NAME = "draft-pr-late"
PACKAGE = "miners._template"
VERDICTS = ("invisible",)
SCOPE = "generic"
CORPUS = ("jsonl",)


def extract(item):
    first = None
    for line in item.lines():
        first = first or line
        if line.is_tool_result() and line.draft_pr_url():
            yield item.fact("score", item.instance, line.seconds_since(first), span=line.span)
            return
    yield item.fact("score", item.instance, item.last.seconds_since(first), span=item.last.span)'''

TEMPLATE_RULES = '''/* predicate
   A gated run is invisible when its first draft pull request comes later than the knee,
   or never comes and the run outlives the knee. */
invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).'''


def run01() -> Run:
    r, name = R01, "draft-pr-late"
    ticket = (
        "title:\tMiner: draft pull request opened late\nstate:\tOPEN\nauthor:\toperator\nlabels:\tmining\n"
        "comments:\t3\nnumber:\t38\n--\nA fixer worked 50 minutes on #31 before anything showed up on the "
        "forge. Runs should open a draft PR as soon as there is a commit.\n"
    )
    calls = [
        Call(6, "I'll read the ticket and the template miner first.",
             [bash("gh issue view 38 --comments", "Read ticket #38 with its comments", 2, ticket)]),
        Call(14, None, [read(f"{worktree(name, r)}/miners/_template/extract.py", TEMPLATE_EXTRACT)]),
        Call(22, None, [read(f"{worktree(name, r)}/miners/_template/rules.dl", TEMPLATE_RULES)]),
        Call(35, None, [bash("ls miners/_template/fixtures", "List the template fixtures", 0,
                             f"{OLD_A}\n{OLD_B}\nlabels.tsv")]),
        Call(51, "The score must come from the tool result that returns the URL, and only when the command "
                 "succeeded; a failed `gh pr create` must not count as a draft.",
             [edit(f"{worktree(name, r)}/miners/_template/extract.py",
                   "        if line.is_tool_result() and line.draft_pr_url():",
                   "        if line.is_tool_result() and not line.is_error and line.draft_pr_url():", line=14)]),
        Call(88, None, [pytest_ok("miners/_template", 19, "....                                  [100%]\n"
                                                         "4 passed in 3.12s")]),
        Call(121, None, [bash("ouro miner draft-pr-late backtest miners/_template/fixtures/labels.tsv "
                              "'miners/_template/fixtures/*/events.jsonl'", "Backtest the template", 4,
                              "| Backtest $\\kappa^\\star$ | 468 (argmax precision on $\\Lambda_{\\le t}$ s.t. "
                              "FN = 0; 2 candidates from `score`) |\n"
                              f"| Backtest TP | 1: {OLD_B} |\n| Backtest FP | 0 |\n| Backtest FN | 0 |")]),
        Call(160, None, [commit_push(name, r, "draft-pr-late: count only a successful gh pr create (#38)",
                                     OPUS)]),
        Call(298, "Committed and pushed; opening the draft pull request now.",
             [draft_pr("draft-pr-late: count only a successful gh pr create (#38)", 52)]),
        Call(325, None, [check_merge(41, ["check-merge: ruff ok", "check-merge: miner tests ok (4 passed)",
                                          "check-merge: backtest.md current", "check-merge: operator identifiers ok",
                                          "check-merge: 4 checks passed"])]),
        Call(372, None, [pr_ready(52)]),
        Call(380, "Done. #52 changes the template's extractor so a failed `gh pr create --draft` no longer counts "
                  "as the draft pull request; tests and the merge gate pass and the PR is ready for review."),
    ]
    return Run(r, "2026-09-28T16:04:09Z", OPUS, worktree(name, r), [proc(0, calls, 381, prompt=BRIEF.format(
        ticket=38, name=name, branch=f"miner/{name}-{r[:4]}", instances=f"{OLD_A}, {OLD_B}"))],
        summary="fixer for #38; early draft PR #52, then gate and ready", draft_pr=52)


BRIEF = (
    "You are a fixer for ticket #{ticket} in {repo_name}. Work only in this worktree, on branch {branch}. "
    "Write the miner {name}: extract.py and rules.dl on the contract, fixtures for the labelled instances "
    "({instances}), labels.tsv, the generated backtest.md and mutation.md, and the README. Commit with "
    "CSF-Session and CSF-Model trailers, push, open a draft pull request, run bash tools/check-merge.sh "
    "and mark the pull request ready only when it exits 0. Never merge."
).replace("{repo_name}", REPO)


def run02() -> Run:
    r, name = R02, "self-match"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: pgrep -f / pkill -f that match their own shell\nstate:\tOPEN\nauthor:\toperator\n"
        "labels:\tmining\ncomments:\t2\nnumber:\t44\n--\n`pkill -f PATTERN` run from the Bash tool matches "
        "the tool's own shell, whose command line contains PATTERN: the shell dies with 143 and the agent "
        "thinks the target is still running.\n"
    )
    extract = (
        '"""self-match: pgrep -f / pkill -f whose pattern is on the calling shell\'s command line."""\n\n'
        'NAME = "self-match"\nPACKAGE = "miners.self_match"\nVERDICTS = ("self_match",)\nSCOPE = "generic"\n'
        'CORPUS = ("jsonl",)\n\nPATTERN_TOOLS = ("pgrep -f", "pkill -f")\n\n\ndef extract(item):\n'
        "    for line in item.lines():\n        cmd = line.bash_command()\n"
        "        if cmd and any(tool in cmd for tool in PATTERN_TOOLS):\n"
        '            yield item.fact("pattern_kill", item.instance, line.span.line, span=line.span)\n'
        "        if line.is_tool_result() and line.exit_code() == 143:\n"
        '            yield item.fact("killed_self", item.instance, line.span.line, span=line.span)\n'
    )
    rules = (
        "/* predicate\n   A run kills or greps its own shell: a pattern kill followed by exit 143. */\n"
        "self_match(R) :- pattern_kill(R, L), killed_self(R, M), gt(M, L).\n"
    )
    fail = ("F                                                                        [100%]\n"
            "=================================== FAILURES ===================================\n"
            "_____________________________ test_backtest_current _____________________________\n"
            "E   AssertionError: backtest.md is not current: regenerate it with `ouro miner self-match "
            "backtest`\n1 failed, 3 passed in 2.87s")
    calls = [
        Call(5, "Reading ticket #44.", [bash("gh issue view 44 --comments", "Read ticket #44", 2, ticket)]),
        Call(17, None, [grep("pkill -f|pgrep -f", "miners", [])]),
        Call(30, None, [bash("mkdir -p miners/self_match && cp -r miners/_template/. miners/self_match/",
                             "Copy the template miner", 0, "")]),
        Call(44, None, [write(f"{wt}/miners/self_match/extract.py", extract)]),
        Call(120, None, [write(f"{wt}/miners/self_match/rules.dl", rules)]),
        Call(170, None, [bash("python -m pytest miners/self_match -q", "Run the miner's tests", 14, fail,
                              err=True)]),
        Call(236, "The copied template fixtures are still listed in labels.tsv; the backtest runs over them.",
             [read(f"{wt}/miners/self_match/fixtures/labels.tsv",
                   f"{OLD_A}\t-\t2026-09-12T08:01:17Z\t-\toperator\n"
                   f"{OLD_B}\t+\t2026-09-14T21:40:03Z\t2026-09-14T22:02:55Z\toperator")]),
        Call(298, None, [edit(f"{wt}/miners/self_match/fixtures/labels.tsv",
                              f"{OLD_A}\t-\t2026-09-12T08:01:17Z\t-\toperator\n"
                              f"{OLD_B}\t+\t2026-09-14T21:40:03Z\t2026-09-14T22:02:55Z\toperator", "")]),
        Call(352, None, [bash("python -m pytest miners/self_match -q", "Run the miner's tests", 13, fail,
                              err=True)]),
        Call(411, "The fixture directories from the template are still there; removing them.",
             [denied(f"rm -rf miners/self_match/fixtures/{OLD_A} miners/self_match/fixtures/{OLD_B}",
                     "Remove the template's fixture runs")]),
        Call(604, "I could not finish #44: removing the template's fixture directories needs `rm -rf`, which "
                  "this session is not permitted to run, and the miner's test keeps reading them. No commit "
                  "was made and no pull request opened."),
    ]
    return Run(r, "2026-09-29T09:12:40Z", SONNET, wt, [proc(0, calls, 610, prompt=BRIEF.format(
        ticket=44, name=name, branch=f"miner/{name}-{r[:4]}", instances="none named"))],
        permission_mode="default", summary="fixer for #44; permission denial on rm -rf, no PR")


SLEEP_EXTRACT = '''"""sleep-poll: waiting on CI with sleep between polls instead of gh run watch."""

NAME = "sleep-poll"
PACKAGE = "miners.sleep_poll"
VERDICTS = ("sleep_poll",)
SCOPE = "generic"
CORPUS = ("jsonl",)


def extract(item):
    for line in item.lines():
        cmd = line.bash_command()
        if not cmd or "sleep" not in cmd:
            continue
        if "gh run view" in cmd or "gh pr checks" in cmd:
            yield item.fact("poll", item.instance, line.span.line, span=line.span)
        if "while true" in cmd:
            yield item.fact("loop", item.instance, line.span.line, span=line.span)'''


def run03() -> Run:
    r, name = R03, "sleep-poll"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: sleep/poll loops instead of gh run watch\nstate:\tOPEN\nauthor:\toperator\n"
        "labels:\tmining\ncomments:\t2\nnumber:\t41\n--\nFixers wait on CI with `sleep 30; gh run view` "
        "over and over, or a `while true` loop with a sleep in it. Each poll is a tool call and a cache "
        "refresh. `gh run watch` exists.\n"
    )
    rules_v1 = (
        "/* predicate\n   A run polls CI with sleep: two polls, or one loop. */\n"
        "sleep_poll(R) :- poll(R, L), poll(R, M), lt(L, M).\nsleep_poll(R) :- loop(R, L).\n"
        "sleep_poll(R, L) :- !watched(R).\n"
    )
    rules_v2 = (
        "/* predicate\n   A run polls CI with sleep: two polls, or one loop, and never uses gh run watch. */\n"
        "sleep_poll(R) :- poll(R, L), poll(R, M), lt(L, M), !watched(R).\n"
        "sleep_poll(R) :- loop(R, _), !watched(R).\n"
    )
    labels = (f"{OLD_A}\t-\t2026-09-12T08:01:17Z\t-\toperator\n"
              f"{OLD_B}\t+\t2026-09-14T21:40:03Z\t2026-09-14T22:30:41Z\toperator\n")
    calls = [
        Call(7, "Starting with ticket #41 and its comments.",
             [bash("gh issue view 41 --comments", "Read ticket #41", 2, ticket)]),
        Call(19, None, [read(f"{wt}/miners/_template/extract.py", TEMPLATE_EXTRACT)]),
        Call(27, None, [read(f"{wt}/miners/_template/README.md",
                             "# draft-pr-late\n\n<!-- agent-drafted -->\n\nFlags a gated run whose first draft "
                             "pull request comes later than the knee.\n\n| Backtest FN | 0 |")]),
        Call(45, None, [glob("miners/*/extract.py", ["miners/_template/extract.py"])]),
        Call(70, None, [bash("cp -r miners/_template miners/sleep_poll", "Copy the template miner", 0, "")]),
        Call(140, None, [write(f"{wt}/miners/sleep_poll/extract.py", SLEEP_EXTRACT)]),
        Call(230, None, [edit_miss(f"{wt}/miners/sleep_poll/README.md", "# draft-pr-late\n\nFlags a gated run",
                                   "# sleep-poll\n\nFlags a gated run")]),
        Call(246, None, [read(f"{wt}/miners/sleep_poll/README.md",
                              "# draft-pr-late\n\n<!-- agent-drafted -->\n\nFlags a gated run whose first draft "
                              "pull request comes later than the knee.\n\n| Backtest FN | 0 |")]),
        Call(262, None, [edit(f"{wt}/miners/sleep_poll/README.md", "# draft-pr-late",
                              "# sleep-poll")]),
        Call(300, None, [write(f"{wt}/miners/sleep_poll/rules.dl", rules_v1)]),
        Call(380, None, [bash("python -m pytest miners/sleep_poll -q", "Run the miner's tests", 22,
                              "E   miners.contract.InvalidRules: unbound variable L in head "
                              "(rules.dl:5)\n1 failed, 3 passed in 3.40s", err=True)]),
        Call(455, "Line 5 is a leftover; the negation belongs in the first two rules.",
             [edit(f"{wt}/miners/sleep_poll/rules.dl", rules_v1, rules_v2)]),
        Call(470, None, [bash("python -m pytest miners/sleep_poll -q", "Run the miner's tests", 21,
                              "E   miners.contract.InvalidRules: negation before its variables are bound: "
                              "!watched(R) (rules.dl:4)\n1 failed, 3 passed in 3.31s", err=True)]),
        Call(560, "`watched` has no extractor yet, so the checker cannot bind it. Emit it from the extractor.",
             [edit(f"{wt}/miners/sleep_poll/extract.py",
                   '        if "while true" in cmd:',
                   '        if "gh run watch" in cmd:\n'
                   '            yield item.fact("watched", item.instance, span=line.span)\n'
                   '        if "while true" in cmd:', line=18)]),
        Call(575, None, [pytest_ok("miners/sleep_poll", 24, "....                                  [100%]\n"
                                                            "4 passed in 3.52s")]),
        Call(640, None, [bash("ls /srv/csf/state | tail -4", "List recent harness runs", 0,
                              f"{OLD_A}\n{OLD_B}\n{R01}\n{R02}")]),
        Call(700, None, [bash(f"grep -c 'gh run view' /srv/csf/state/{OLD_A}/events.jsonl "
                              f"/srv/csf/state/{OLD_B}/events.jsonl",
                              "Count CI polls in the candidate runs", 0,
                              f"/srv/csf/state/{OLD_A}/events.jsonl:0\n/srv/csf/state/{OLD_B}/events.jsonl:7")]),
        Call(820, None, [write(f"{wt}/miners/sleep_poll/fixtures/labels.tsv", labels)]),
        Call(900, None, [bash("ouro miner sleep-poll backtest miners/sleep_poll/fixtures/labels.tsv "
                              "'miners/sleep_poll/fixtures/*/events.jsonl'", "Backtest the miner", 8,
                              "| Backtest TP | 0 |\n| Backtest FP | 0 |\n| Backtest FN | 1: " + OLD_B + " |")]),
        Call(1000, "FN 1: the fixture for the positive kept only the first poll. Copying both poll lines.",
             [bash(f"grep 'gh run view' /srv/csf/state/{OLD_B}/events.jsonl "
                   f"> miners/sleep_poll/fixtures/{OLD_B}/events.jsonl && wc -l < "
                   f"miners/sleep_poll/fixtures/{OLD_B}/events.jsonl", "Copy every poll line into the fixture",
                   0, "7")]),
        Call(1040, None, [bash("ouro miner sleep-poll backtest miners/sleep_poll/fixtures/labels.tsv "
                               "'miners/sleep_poll/fixtures/*/events.jsonl'", "Backtest the miner", 8,
                               "| Backtest TP | 1: " + OLD_B + " |\n| Backtest FP | 0 |\n| Backtest FN | 0 |")]),
        Call(1100, None, [bash("ouro miner sleep-poll mutate --json miners/sleep_poll/fixtures/labels.tsv "
                               "'miners/sleep_poll/fixtures/*/events.jsonl' > miners/sleep_poll/mutation.json",
                               "Mutation-test the miner", 61, "")]),
        Call(1190, None, [commit_push(name, r, "miner: sleep-poll flags CI polling with sleep (#41)", OPUS, 7)]),
        Call(1255, None, [draft_pr("miner: sleep-poll flags CI polling with sleep (#41)", 56)]),
        Call(1290, None, [check_merge(44, ["check-merge: ruff ok", "check-merge: miner tests ok (4 passed)",
                                           "check-merge: backtest.md current",
                                           "check-merge: operator identifiers ok", "check-merge: 4 checks passed"])]),
        Call(1350, None, [pr_ready(56)]),
        Call(1362, "#56 is ready: the sleep-poll miner with two fixtures, backtest FN 0, mutation report "
                   "attached. It took a while to get the rule past the safety check."),
    ]
    return Run(r, "2026-09-30T13:40:02Z", OPUS, wt, [proc(0, calls, 1363, prompt=BRIEF.format(
        ticket=41, name=name, branch=f"miner/{name}-{r[:4]}", instances=f"{OLD_A}, {OLD_B}"))],
        summary="fixer for #41; late draft PR #56 after rule errors", draft_pr=56)


def run04() -> Run:
    r, name = R04, "repeated-failure"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: the same failing command, again and again\nstate:\tOPEN\nauthor:\toperator\n"
        "labels:\tmining\ncomments:\t2\nnumber:\t47\n--\nA fixer ran the identical failing pytest command "
        "four times in a row without changing anything in between. Flag runs that repeat an identical "
        "failing tool call three or more times.\n"
    )
    extract = (
        '"""repeated-failure: an identical failing tool call, three or more times in a row."""\n\n'
        'NAME = "repeated-failure"\nPACKAGE = "miners.repeated_failure"\nVERDICTS = ("repeated_failure",)\n'
        'SCOPE = "generic"\nCORPUS = ("jsonl",)\n\n\ndef extract(item):\n    streak, last = 0, None\n'
        "    for call in item.tool_calls():\n        key = (call.name, call.input_json)\n"
        "        streak = streak + 1 if call.is_error and key == last else int(call.is_error)\n"
        "        last = key if call.is_error else None\n"
        '        yield item.fact("streak", item.instance, streak, span=call.result_span)\n'
        '    yield item.fact("score", item.instance, streak, span=item.last.span)\n'
    )
    calls = [
        Call(5, "Reading ticket #47.", [bash("gh issue view 47 --comments", "Read ticket #47", 2, ticket)]),
        Call(16, "The latest proposal on #47 names only the ticket itself, so I'll find a real instance in the "
                 "harness state first.",
             [bash("grep -l '\"is_error\":true' /srv/csf/state/*/events.jsonl | head -3",
                   "Find runs with failing tool calls", 1,
                   f"/srv/csf/state/{OLD_A}/events.jsonl\n/srv/csf/state/{OLD_B}/events.jsonl")]),
        Call(40, None, [bash("cp -r miners/_template miners/repeated_failure", "Copy the template miner", 0, "")]),
        Call(102, None, [write(f"{wt}/miners/repeated_failure/extract.py", extract)]),
        Call(170, None, [write(f"{wt}/miners/repeated_failure/rules.dl",
                               "/* predicate\n   A run repeats an identical failing tool call past the knee. */\n"
                               "repeated_failure(R) :- gated(R), score(R, S), knee(K), ge(S, K).\n")]),
        Call(215, None, [bash("python -m pytest miners/repeated_failure -q", "Run the miner's tests", 9,
                              "E   AttributeError: 'Item' object has no attribute 'tool_calls'. Did you "
                              "mean: 'tool_uses'?\n4 failed in 1.95s", err=True)]),
        Call(240, None, [edit(f"{wt}/miners/repeated_failure/extract.py", "    for call in item.tool_calls():",
                              "    for call in item.tool_uses():", line=12)]),
        Call(252, None, [pytest_ok("miners/repeated_failure", 10, "....                                  [100%]\n"
                                                                  "4 passed in 2.04s")]),
        Call(301, None, [bash("ouro miner repeated-failure backtest miners/repeated_failure/fixtures/labels.tsv "
                              "'miners/repeated_failure/fixtures/*/events.jsonl'", "Backtest the miner", 5,
                              "| Backtest $\\kappa^\\star$ | 3 (argmax precision on $\\Lambda_{\\le t}$ s.t. "
                              "FN = 0; 3 candidates from `score`) |\n| Backtest TP | 1: " + OLD_B +
                              " |\n| Backtest FP | 0 |\n| Backtest FN | 0 |")]),
        Call(380, None, [commit_push(name, r, "miner: repeated-failure flags identical failing retries (#47)",
                                     OPUS)]),
        Call(464, None, [draft_pr("miner: repeated-failure flags identical failing retries (#47)", 60)]),
        Call(480, None, [check_merge(38, ["check-merge: ruff ok", "check-merge: miner tests ok (4 passed)",
                                          "check-merge: backtest.md current", "check-merge: operator identifiers ok",
                                          "check-merge: 4 checks passed"])]),
        Call(530, None, [pr_ready(60)]),
        Call(541, "Opened #60 with the repeated-failure miner. #47's proposal named no real run, so the "
                  "positive fixture is the run I found in the harness state; backtest FN 0."),
    ]
    return Run(r, "2026-10-01T08:15:27Z", OPUS, wt, [proc(0, calls, 542, prompt=BRIEF.format(
        ticket=47, name=name, branch=f"miner/{name}-{r[:4]}", instances="#47"))],
        version="2.1.250", summary="fixer for #47; draft PR #60 at the knee, then ready", draft_pr=60)


def run05() -> Run:
    r, name = R05, "vocabulary"
    wt = worktree(name, r)
    branch = f"miner/{name}-{r[:4]}"
    ticket = (
        "title:\tVocabulary: define struggle and gate escape\nstate:\tOPEN\nauthor:\toperator\nlabels:\tLANG\n"
        "comments:\t1\nnumber:\t46\n--\nThe measurer counts struggles and the severity scale names gate "
        "escapes, but neither term is in ruleset/vocabulary.toml. Add both, with the definitions the seed "
        "uses.\n"
    )
    vocab = ('[terms.finding]\ndefinition = "a verdict a miner derived, with its proof"\n\n'
             '[terms.knee]\ndefinition = "the threshold a backtest fits on the earlier half of the labels"\n')
    full = "python -m pytest -q -x"
    calls = [
        Call(8, "Reading ticket #46.", [bash("gh issue view 46 --comments", "Read ticket #46", 2, ticket)]),
        Call(20, None, [grep("struggle|gate escape", ".", ["workers/measurer/series.py", "schemas/findings.py"])]),
        Call(41, None, [read(f"{wt}/ruleset/vocabulary.toml", vocab)]),
        Call(95, None, [edit(f"{wt}/ruleset/vocabulary.toml", '[terms.knee]',
                             '[terms.struggle]\ndefinition = "a tool call whose result is an error or a gate '
                             'denial"\n\n[terms.knee]', line=4)]),
        Call(160, None, [edit(f"{wt}/ruleset/vocabulary.toml", '[terms.knee]',
                              '[terms.gate_escape]\ndefinition = "an offense a gate should have refused '
                              '(severity S0)"\n\n[terms.knee]', line=7)]),
        Call(230, None, [bash(full, "Run the whole test suite", 388,
                              "F\n=================================== FAILURES ===================================\n"
                              "__________________________ test_vocabulary_is_sorted __________________________\n"
                              "E   AssertionError: terms out of order: struggle before gate_escape\n"
                              "1 failed, 412 passed in 386.20s (0:06:26)", err=True)]),
        Call(700, None, [edit(f"{wt}/ruleset/vocabulary.toml",
                              '[terms.struggle]\ndefinition = "a tool call whose result is an error or a gate '
                              'denial"\n\n[terms.gate_escape]\ndefinition = "an offense a gate should have refused '
                              '(severity S0)"',
                              '[terms.gate_escape]\ndefinition = "an offense a gate should have refused '
                              '(severity S0)"\n\n[terms.struggle]\ndefinition = "a tool call whose result is an '
                              'error or a gate denial"', line=4)]),
        Call(760, None, [bash(full, "Run the whole test suite", 402, "413 passed in 400.07s (0:06:40)")]),
        Call(1250, None, [bash("git fetch -q origin && git rebase origin/main", "Rebase on main", 3,
                               "Auto-merging ruleset/vocabulary.toml\nCONFLICT (content): Merge conflict in "
                               "ruleset/vocabulary.toml\nerror: could not apply 5d1c0e2... vocabulary: define "
                               "struggle and gate escape (#46)", err=True)]),
        Call(1300, None, [read(f"{wt}/ruleset/vocabulary.toml",
                               '<<<<<<< HEAD\n[terms.fleet]\ndefinition = "every worker host"\n=======\n'
                               '[terms.gate_escape]\ndefinition = "an offense a gate should have refused '
                               '(severity S0)"\n>>>>>>> 5d1c0e2 (vocabulary: define struggle and gate escape)')]),
        Call(1420, None, [edit(f"{wt}/ruleset/vocabulary.toml",
                               '<<<<<<< HEAD\n[terms.fleet]\ndefinition = "every worker host"\n=======\n',
                               '[terms.fleet]\ndefinition = "every worker host"\n\n', line=4)]),
        Call(1500, None, [bash("git add ruleset/vocabulary.toml && GIT_EDITOR=true git rebase --continue",
                               "Continue the rebase", 1,
                               f"Successfully rebased and updated refs/heads/{branch}.")]),
        Call(1560, None, [bash(full, "Run the whole test suite", 395, "415 passed in 393.51s (0:06:33)")]),
        Call(2050, None, [bash(f"git push -u origin {branch}", "Push the branch", 3,
                               f"To github.com:{REPO}.git\n ! [rejected]        {branch} -> {branch} "
                               "(non-fast-forward)\nerror: failed to push some refs", err=True)]),
        Call(2110, "A branch of that name is already on the remote from an earlier session.",
             [gate(f"git push --force-with-lease origin {branch}", "Overwrite the stale remote branch",
                   "csf gate: refused: git push --force-with-lease rewrites a published branch "
                   "(rule no-history-rewrite)")]),
        Call(2140, "The gate refuses history rewrites; merging the remote branch instead.",
             [bash(f"git pull --no-rebase --no-edit origin {branch}", "Merge the remote branch", 4,
                   "Merge made by the 'ort' strategy.\n ruleset/vocabulary.toml | 2 +-")]),
        Call(2200, None, [bash(full, "Run the whole test suite", 401, "415 passed in 399.88s (0:06:39)")]),
        Call(2700, None, [bash(f"git push origin {branch}", "Push the branch", 3,
                               f"To github.com:{REPO}.git\n   9be41c7..0f3d2a8  {branch} -> {branch}")]),
        Call(2800, None, [bash("python3 tools/check_operator_identifiers.py", "Check for operator identifiers",
                               2, "operator identifiers: 0 found in 3 changed files")]),
        Call(3020, None, [write("/tmp/pr-body.md",
                                "Adds `struggle` and `gate_escape` to ruleset/vocabulary.toml (#46).\n\n"
                                "Language change: no miner, no backtest.")]),
        Call(3085, None, [draft_pr("vocabulary: define struggle and gate escape (#46)", 59)]),
        Call(3092, "Opened draft #59 with the two vocabulary terms. The full suite passes. The gate refused a "
                   "force push, so the stale remote branch was merged instead."),
    ]
    follow_up = [
        Call(3099, None, [bash("gh pr edit 59 --add-label LANG", "Label the pull request LANG", 2,
                               f"{FORGE}/pull/59")]),
        Call(3110, "#59 is labelled LANG, so the merge train leaves it to a person."),
    ]
    brief = BRIEF.format(ticket=46, name=name, branch=branch, instances="none")
    turns = [
        Turn(calls, 3093),
        Turn(follow_up, 3112, user=(3094, "Label #59 LANG: it changes the vocabulary, so the merge train "
                                          "must not merge it.")),
    ]
    return Run(r, "2026-10-01T19:02:51Z", OPUS, wt, [Process(0, turns, prompt=brief)],
        version="2.1.250", summary="fixer for #46; very late draft PR #59 (LANG), gate denial", draft_pr=59)


SHELL_EXTRACT = '''"""shell-true: subprocess with shell=True on a string built from request input."""

import tree_sitter_python

NAME = "shell-true"
PACKAGE = "miners.shell_true"
VERDICTS = ("shell_from_request",)
SCOPE = "generic"
CORPUS = ("file_at",)'''


def run06() -> Run:
    r, name = R06, "shell-true"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: shell=True on a command built from request input\nstate:\tOPEN\nauthor:\toperator\n"
        "labels:\tmining, security\ncomments:\t2\nnumber:\t53\n--\nexample/shop's export endpoint builds a "
        "shell command from `request.args` and runs it with `shell=True`. Find such functions at a "
        "revision.\n"
    )
    shown = "\n".join([
        "def export_report(month: str, fmt: str = \"csv\") -> str:",
        "    target = f\"/tmp/sales-{month}.{fmt}.gz\"",
        "    subprocess.run(",
        "        f\"python -m shop.render_report --month {month} --format {fmt} | gzip > {target}\",",
        "        shell=True,",
    ])
    failing = "python -m pytest miners/shell_true -q"
    nomod = ("ImportError while importing test module 'miners/shell_true/tests/test_miner.py'.\n"
             "miners/shell_true/extract.py:3: in <module>\n    import tree_sitter_python\n"
             "E   ModuleNotFoundError: No module named 'tree_sitter_python'\n1 error in 0.41s")
    p1 = [
        Call(6, "Reading ticket #53.", [bash("gh issue view 53 --comments", "Read ticket #53", 2, ticket)]),
        Call(20, None, [bash("git -C /srv/repos/shop show --stat 374fdc4", "Show the named commit", 0,
                             "commit 374fdc42a6f08d4e0d87c07a7921acd59048b00e\n"
                             "    Serve invoices by name and show the search query as a heading\n\n"
                             " shop/__init__.py       |  1 +\n shop/app.py            |  8 ++++++++\n"
                             " shop/files.py          |  5 +++++\n shop/static/cart.js    |  4 ++++\n"
                             " 4 files changed, 18 insertions(+)")]),
        Call(40, None, [bash("git -C /srv/repos/shop show 374fdc4:shop/reports.py | sed -n 17,23p",
                             "Read the export function at that revision", 0, shown)]),
        Call(75, None, [bash("cp -r miners/_template miners/shell_true", "Copy the template miner", 0, "")]),
        Call(160, None, [write(f"{wt}/miners/shell_true/extract.py", SHELL_EXTRACT)]),
        Call(240, None, [write(f"{wt}/miners/shell_true/rules.dl",
                               "/* predicate\n   A function runs a shell on a command built from request "
                               "input. */\nshell_from_request(F) :- shell_call(F, L), tainted(F, L).\n")]),
        Call(300, None, [bash(failing, "Run the miner's tests", 9, nomod, err=True, code=2)]),
        Call(330, None, [bash(failing, "Run the miner's tests", 9, nomod, err=True, code=2)]),
        Call(352, "Running it again.", [bash(failing, "Run the miner's tests", 9, nomod, err=True, code=2)]),
        Call(377, None, [bash(failing, "Run the miner's tests", 9, nomod, err=True, code=2)]),
        Call(420, None, [bash("pip install tree-sitter-python", "Install the parser", 6,
                              "ERROR: Could not find a version that satisfies the requirement tree-sitter-python "
                              "(from versions: none)\nERROR: No matching distribution found for "
                              "tree-sitter-python", err=True)]),
        Call(500, "No network in the sandbox; the standard library's ast module is enough for Python files.",
             [edit(f"{wt}/miners/shell_true/extract.py", "import tree_sitter_python", "import ast", line=3)]),
        Call(560, None, [bash(failing, "Run the miner's tests", 11,
                              "E   AssertionError: no fact names 374fdc4\n1 failed, 3 passed in 2.20s",
                              err=True)]),
        Call(640, None, [read(f"{wt}/miners/shell_true/extract.py", SHELL_EXTRACT.replace(
            "import tree_sitter_python", "import ast"))]),
        Call(700, None, [bash(failing, "Run the miner's tests", 12,
                              "E   AssertionError: no fact names 374fdc4\n1 failed, 3 passed in 2.31s",
                              err=True)]),
        Call(760, "I have reached the turn limit without a passing test."),
    ]
    p2 = [
        Call(1538, "Resuming #53. The extractor reads the file but never yields a fact for the commit.",
             [read(f"{wt}/miners/shell_true/extract.py", SHELL_EXTRACT.replace(
                 "import tree_sitter_python", "import ast"))]),
        Call(1580, None, [edit(f"{wt}/miners/shell_true/extract.py", 'CORPUS = ("file_at",)',
                               'CORPUS = ("file_at",)\n\n\ndef extract(item):\n'
                               "    tree = ast.parse(item.text)\n    for node in ast.walk(tree):\n"
                               "        if isinstance(node, ast.Call) and any(\n"
                               '            k.arg == "shell" and getattr(k.value, "value", False) is True '
                               "for k in node.keywords\n        ):\n"
                               '            yield item.fact("shell_call", item.function_at(node.lineno), '
                               "node.lineno, span=item.span(node.lineno))", line=10)]),
        Call(1650, None, [pytest_ok("miners/shell_true", 10, "....                                  [100%]\n"
                                                             "4 passed in 2.18s")]),
        Call(1720, None, [bash("ouro miner shell-true backtest miners/shell_true/fixtures/labels.tsv "
                               "'miners/shell_true/fixtures/*'", "Backtest the miner", 6,
                               "| Backtest TP | 0 |\n| Backtest FP | 0 |\n| Backtest FN | 2: 374fdc4, bd0245e |")]),
        Call(1800, None, [bash("ouro miner shell-true facts 'miners/shell_true/fixtures/*'", "Print the facts",
                               3, "shell_call(\"shop/reports.py:export_report\", 20)  "
                                  "# miners/shell_true/fixtures/374fdc4/shop/reports.py:20")]),
        Call(1950, "`tainted` is never derived: the extractor does not follow `month` back to "
                   "`request.args` in app.py.",
             [edit(f"{wt}/miners/shell_true/rules.dl", "shell_from_request(F) :- shell_call(F, L), tainted(F, L).",
                   "shell_from_request(F) :- shell_call(F, L), tainted(F, L).\n"
                   "tainted(F, L) :- shell_call(F, L), param_of(F, P), request_arg(_, P).", line=3)]),
        Call(2020, None, [bash("ouro miner shell-true backtest miners/shell_true/fixtures/labels.tsv "
                               "'miners/shell_true/fixtures/*'", "Backtest the miner", 6,
                               "| Backtest TP | 1: 374fdc4 |\n| Backtest FP | 0 |\n| Backtest FN | 1: bd0245e |")]),
        Call(2238, "Stopping here without a pull request: the backtest still misses bd0245e (FN 1), and #53 "
                   "asks for FN 0. The extractor needs call-graph facts (`param_of`, `request_arg`) across "
                   "files, which the file_at reader does not give one file at a time."),
    ]
    prompt = BRIEF.format(ticket=53, name=name, branch=f"miner/{name}-{r[:4]}", instances="374fdc4")
    return Run(r, "2026-10-02T10:30:05Z", OPUS, wt, [
        proc(0, p1, 762, subtype="error_max_turns", prompt=prompt),
        proc(1530, p2, 2240),
    ], version="2.1.250", summary="fixer for #53; one failing command 4x, max turns, reopened, never a PR")


def run07() -> Run:
    r, name = R07, "self-merge"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: pull requests merged by the merge train's own identity\nstate:\tOPEN\n"
        "author:\toperator\nlabels:\tmining\ncomments:\t2\nnumber:\t50\n--\nNO-SELF-MERGE is enforced by the "
        "train; a miner over pull requests should flag any PR whose commits carry the merger's identity in "
        "a CSF-Session trailer, so we see it in the findings too.\n"
    )
    extract = (
        '"""self-merge: a pull request whose commits carry the merger\'s identity."""\n\n'
        'NAME = "self-merge"\nPACKAGE = "miners.self_merge"\nVERDICTS = ("self_merge",)\nSCOPE = "generic"\n'
        'CORPUS = ("pull_request",)\n\n\ndef extract(item):\n    for commit in item.commits():\n'
        "        for value in commit.trailers(\"CSF-Session\"):\n"
        '            if value.startswith("ouroboros-merger/"):\n'
        '                yield item.fact("merger_commit", item.instance, commit.sha, span=commit.span)\n'
    )
    poll = "sleep 30; gh run view 18342210417 --json status,conclusion"
    poll2 = "sleep 30; gh run view 18342290133 --json status,conclusion"
    running = '{"conclusion":"","status":"in_progress"}'
    loop = ("while true; do s=$(gh run view 18342210417 --json status -q .status); "
            "[ \"$s\" = completed ] && break; sleep 10; done; "
            "gh run view 18342210417 --json conclusion -q .conclusion")
    calls = [
        Call(5, "Reading ticket #50.", [bash("gh issue view 50 --comments", "Read ticket #50", 2, ticket)]),
        Call(15, None, [bash("cp -r miners/_template miners/self_merge", "Copy the template miner", 0, "")]),
        Call(52, None, [write(f"{wt}/miners/self_merge/extract.py", extract)]),
        Call(90, None, [write(f"{wt}/miners/self_merge/rules.dl",
                              "/* predicate\n   A pull request carries the merger's identity. */\n"
                              "self_merge(P) :- merger_commit(P, _).\n")]),
        Call(118, None, [pytest_ok("miners/self_merge", 8, "....                                  [100%]\n"
                                                           "4 passed in 1.77s")]),
        Call(140, None, [commit_push(name, r, "miner: self-merge flags the merger's identity in commits (#50)",
                                     SONNET)]),
        Call(181, "Opening the draft early so the work is visible while CI runs.",
             [draft_pr("miner: self-merge flags the merger's identity in commits (#50)", 55)]),
        Call(200, None, [bash(poll, "Wait and check the CI run", 32, running)]),
        Call(240, None, [bash(poll, "Wait and check the CI run", 32, running)]),
        Call(280, None, [bash(poll, "Wait and check the CI run", 32, running)]),
        Call(318, None, [bash(poll, "Wait and check the CI run", 32, running)]),
        Call(360, "Still running; looping until it completes.",
             [bash(loop, "Wait for the CI run to complete", 412, "failure", timeout=600000)]),
        Call(780, None, [bash("gh run view 18342210417 --log-failed | tail -4", "Read the failed CI log", 3,
                              "miner_test\tRun tests\tE   AssertionError: labels.tsv names #52, which the "
                              "fixture directory lacks\nminer_test\tRun tests\t1 failed, 3 passed in 1.92s\n"
                              "miner_test\tRun tests\t##[error]Process completed with exit code 1.")]),
        Call(830, None, [bash("mkdir -p miners/self_merge/fixtures/52 && gh pr view 52 --json number,commits "
                              "> miners/self_merge/fixtures/52/pull_request.json", "Add the missing fixture",
                              2, "")]),
        Call(870, None, [pytest_ok("miners/self_merge", 8, "....                                  [100%]\n"
                                                           "4 passed in 1.81s")]),
        Call(900, None, [bash("git add -A && git commit -q -m \"self-merge: add the #52 fixture\" "
                              f"-m \"CSF-Session: {r}\" -m \"CSF-Model: {SONNET}\" && git push",
                              "Commit and push the fixture", 5,
                              f"To github.com:{REPO}.git\n   a41c9e0..c07d5b3  miner/{name}-{r[:4]} -> "
                              f"miner/{name}-{r[:4]}")]),
        Call(912, None, [bash(poll2, "Wait and check the CI run", 32, running)]),
        Call(950, None, [bash(poll2, "Wait and check the CI run", 32, running)]),
        Call(990, None, [bash(poll2, "Wait and check the CI run", 32,
                              '{"conclusion":"success","status":"completed"}')]),
        Call(1030, "CI is green on #55. It stays a draft: the backtest has no positive yet (FN 1) until "
                   "#50's proposal names a pull request that really carries the merger's identity."),
    ]
    return Run(r, "2026-10-02T17:20:44Z", SONNET, wt, [proc(0, calls, 1031, prompt=BRIEF.format(
        ticket=50, name=name, branch=f"miner/{name}-{r[:4]}", instances="#52"))],
        version="2.1.250", summary="fixer for #50; early draft PR #55, then sleep/poll on CI", draft_pr=55)


def run08() -> Run:
    r, name = R08, "cache-ratio"
    wt = worktree(name, r)
    ticket = (
        "title:\tMiner: runs below the prompt-cache floor (h_r)\nstate:\tOPEN\nauthor:\toperator\n"
        "labels:\tmining\ncomments:\t3\nnumber:\t48\n--\nh_fleet clears 0.9867 while most runs fall below it "
        "on their own. Flag runs whose cache_read share of result usage is under the floor.\n"
    )
    slow = "python -m pytest -k slow miners/cache_ratio -q"
    wait = 'sleep {n}; pgrep -f "pytest -k slow"'
    calls = [
        Call(6, "Reading ticket #48 with its comments.",
             [bash("gh issue view 48 --comments", "Read ticket #48", 2, ticket)]),
        Call(18, None, [read(f"{wt}/miners/_template/extract.py", TEMPLATE_EXTRACT)]),
        Call(30, None, [bash("cp -r miners/_template miners/cache_ratio", "Copy the template miner", 0, "")]),
        Call(110, None, [write(f"{wt}/miners/cache_ratio/extract.py",
                               '"""cache-ratio: a run whose prompt-cache hit ratio h_r is under the floor."""\n\n'
                               'NAME = "cache-ratio"\nPACKAGE = "miners.cache_ratio"\nVERDICTS = ("cold_cache",)\n'
                               'SCOPE = "generic"\nCORPUS = ("jsonl",)\n\n\ndef extract(item):\n'
                               "    read = total = 0\n    for line in item.results():\n"
                               "        u = line.usage\n        read += u.cache_read\n"
                               "        total += u.input + u.cache_creation + u.cache_read\n"
                               "    if total:\n"
                               '        yield item.fact("score", item.instance, round(10000 * (1 - read / total)),'
                               " span=item.last_result.span)\n")]),
        Call(190, None, [write(f"{wt}/miners/cache_ratio/rules.dl",
                               "/* predicate\n   A gated run misses the cache more than the knee allows "
                               "(score = 10000 x (1 - h_r)). */\n"
                               "cold_cache(R) :- gated(R), score(R, S), knee(K), gt(S, K).\n")]),
        Call(240, None, [pytest_ok("miners/cache_ratio", 6, ".....                                 [100%]\n"
                                                            "5 passed, 2 deselected in 1.61s", ' -k "not slow"')]),
        Call(262, "The property tests are slow; running them in the background.",
             [bash_bg(slow, "Run the slow property tests in the background", "b8f2c1a")]),
        Call(300, None, [bash(wait.format(n=45), "Check whether the slow tests still run", 46, "51877\n51993")]),
        Call(352, None, [bash(wait.format(n=60), "Check whether the slow tests still run", 61, "51877\n52141")]),
        Call(420, None, [bash(wait.format(n=120), "Check whether the slow tests still run", 121, "52377")]),
        Call(548, None, [bash(wait.format(n=120), "Check whether the slow tests still run", 121, "52610")]),
        Call(700, "The slow tests look hung; stopping them.",
             [bash('pkill -f "pytest -k slow"; sleep 1; pgrep -f "pytest -k slow" || echo stopped',
                   "Stop the slow tests", 1, "", err=True, code=143)]),
        Call(715, None, [bash('ps -eo pid,etime,args | grep -- "-k slow"', "List processes with -k slow", 0,
                              '  52911       00:00 grep -- -k slow')]),
        Call(735, "pgrep -f was matching the Bash tool's own shell, whose command line contains the pattern; "
                  "the slow tests had finished minutes ago. Running them in the foreground instead.",
             [bash(f"timeout 600 {slow}", "Run the slow property tests", 331,
                   "..                                    [100%]\n2 passed, 5 deselected in 329.80s (0:05:29)",
                   timeout=600000)]),
        Call(1120, None, [bash("ouro miner cache-ratio backtest miners/cache_ratio/fixtures/labels.tsv "
                               "'miners/cache_ratio/fixtures/*/events.jsonl'", "Backtest the miner", 5,
                               "| Backtest $\\kappa^\\star$ | 1420 (argmax precision on $\\Lambda_{\\le t}$ s.t. "
                               "FN = 0; 2 candidates from `score`) |\n| Backtest TP | 1: " + OLD_A +
                               " |\n| Backtest FP | 0 |\n| Backtest FN | 0 |")]),
        Call(1200, None, [bash("ouro miner cache-ratio mutate miners/cache_ratio/fixtures/labels.tsv "
                               "'miners/cache_ratio/fixtures/*/events.jsonl' > miners/cache_ratio/mutation.md",
                               "Mutation-test the miner", 95, "")]),
        Call(1330, None, [edit(f"{wt}/miners/cache_ratio/README.md", "# draft-pr-late", "# cache-ratio")]),
        Call(1400, None, [bash("python3 tools/check_operator_identifiers.py", "Check for operator identifiers",
                               2, "operator identifiers: 0 found in 7 changed files")]),
        Call(1460, None, [commit_push(name, r, "miner: cache-ratio flags runs under the h_r floor (#48)", OPUS)]),
        Call(1650, None, [write("/tmp/pr-body.md", "cache-ratio miner for #48; backtest and mutation below.")]),
        Call(1706, None, [draft_pr("miner: cache-ratio flags runs under the h_r floor (#48)", 58)]),
        Call(1740, None, [check_merge(40, ["check-merge: ruff ok", "check-merge: miner tests ok (7 passed)",
                                           "check-merge: backtest.md current",
                                           "check-merge: operator identifiers ok",
                                           "check-merge: 4 checks passed"])]),
        Call(1790, None, [pr_ready(58)]),
        Call(1800, "#58 is ready: the cache-ratio miner, backtest FN 0. Note for the ticket: `pgrep -f` and "
                   "`pkill -f` from the Bash tool match the tool's own shell."),
    ]
    return Run(r, "2026-10-03T07:48:19Z", OPUS, wt, [proc(0, calls, 1801, prompt=BRIEF.format(
        ticket=48, name=name, branch=f"miner/{name}-{r[:4]}", instances=OLD_A))],
        version="2.1.252", summary="fixer for #48; self-matching pgrep/pkill, late draft PR #58", draft_pr=58)


# --------------------------------------------------------------------------- proposals


def proposal(miner: str, corpus: list[str], instances: list[str], predicate: str, facts: list[str],
             labels: list[tuple[str, str]], when: str) -> str:
    def q(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    toml = "\n".join([
        f"miner = {q(miner)}",
        f"corpus = [{', '.join(q(c) for c in corpus)}]",
        f"instances = [{', '.join(q(i) for i in instances)}]",
        f"predicate = {q(predicate)}",
        "facts = [",
        *[f"  {q(f)}," for f in facts],
        "]",
        f"labels = [{', '.join(f'[{q(i)}, {q(s)}]' for i, s in labels)}]",
    ])
    return (f"Proposal from the overnight loop ({when}); not backtested.\n\n"
            f"```ouroboros-proposal\n{toml}\n```\n")


GATED = "gated(R) :- run R ran with session gates on"

P44 = proposal(
    "self-match", ["jsonl"], [GHOST_A, GHOST_B],
    "a Bash tool call runs `pkill -f` or `pgrep -f` with a pattern that is also on the calling shell's "
    "command line, so it matches or kills that shell (`Exit code 143`)",
    [GATED, 'pattern_kill(R, L) :- line L of run R is a Bash tool_use whose command has "pkill -f" or "pgrep -f"',
     'killed_self(R, L) :- line L of run R is a tool_result with "Exit code 143"'],
    [(GHOST_A, "+"), (GHOST_B, "-")], "2026-10-03")
P47 = proposal(
    "repeated-failure", ["issue"], ["#47"],
    "a run repeats an identical failing tool call (`is_error` true, same `input`) three or more times in a row",
    [GATED, 'failed_call(R, L, C) :- line L of run R is a tool_result with "is_error": true for call C',
     "same_input(C, D) :- tool calls C and D have identical input"],
    [("#47", "+")], "2026-10-03")
P48_MALFORMED = (
    "Proposal from the overnight loop (2026-10-03); not backtested.\n\n"
    "```ouroboros-proposal\n"
    'miner = "cache-ratio"\n'
    'corpus = ["jsonl"]\n'
    f"instances = [{R05}, {R03}]\n"
    'predicate = "a run\'s prompt-cache hit ratio `h_r` (cache_read over input + cache_creation + '
    'cache_read of its `result` usage) is under the `0.9867` floor"\n'
    'facts = ["score(R, S) :- S is 10000 x (1 - h_r) over the result lines of run R"]\n'
    f'labels = [["{R05}", "+"], ["{R03}", "-"]\n'
    "```\n"
)


def run09() -> Run:
    r = R09
    cwd = "/srv/csf/loop"

    def post(n: int, body: str, cid: int) -> Tool:
        cmd = f"gh issue comment {n} --body \"$(cat <<'EOF'\n{body}EOF\n)\""
        return bash(cmd, f"Post the proposal on #{n}", 2, f"{FORGE}/issues/{n}#issuecomment-{cid}")

    def view(n: int, title: str) -> Tool:
        return bash(f"gh issue view {n} --json title,body,comments", f"Read ticket #{n}", 1,
                    json.dumps({"title": title, "body": "…", "comments": []}))

    procs = [
        proc(0, [
            Call(4, "Drafting the proposal for #44.", [view(44, TICKET_TITLES[44])]),
            Call(41, None, [post(44, P44, COMMENT_IDS[44])]),
            Call(52, "Posted on #44. Next, #47.", [view(47, TICKET_TITLES[47])]),
            Call(101, None, [post(47, P47, COMMENT_IDS[47])]),
            Call(118, "Posted the proposals on #44 and #47."),
        ], 119, prompt="2026-10-03T09:05:33Z Write an ouroboros-proposal for tickets #44 and #47 and post "
                       "each as a comment."),
        proc(250, [
            Call(255, "Drafting the proposal for #48.", [view(48, TICKET_TITLES[48])]),
            Call(330, None, [post(48, P48_MALFORMED, COMMENT_IDS[48])]),
            Call(393, "Posted the proposal on #48."),
        ], 395, prompt="2026-10-03T09:09:43Z Write an ouroboros-proposal for ticket #48 and post it."),
    ]
    return Run(r, "2026-10-03T09:05:33Z", HAIKU, cwd, procs, permission_mode="default", version="2.1.252",
               tools=list(LOOP_TOOLS), cold_cache=True,
               summary="the overnight loop posting proposals; reopened process, cold cache")


TICKET_TITLES = {
    38: "Miner: draft pull request opened late",
    41: "Miner: sleep/poll loops instead of gh run watch",
    44: "Miner: pgrep -f / pkill -f that match their own shell",
    45: "Ops page: spend panel resets at midnight UTC, not Los Angeles",
    46: "Vocabulary: define struggle and gate escape",
    47: "Miner: the same failing command, again and again",
    48: "Miner: runs below the prompt-cache floor (h_r)",
    50: "Miner: pull requests merged by the merge train's own identity",
    53: "Miner: shell=True on a command built from request input",
}
COMMENT_IDS = {44: 3391204417, 47: 3391231050, 48: 3391262284}

SCENARIOS = [run01, run02, run03, run04, run05, run06, run07, run08, run09]

# draft-pr-late labels: (run, +/-, seconds after the start when the operator flagged it, or None).
LABELS = [
    (R01, "-", None), (R02, "-", None), (R03, "+", 1140), (R04, "-", None), (R05, "+", 1380),
    (R06, "+", 1020), (R07, "-", None), (R08, "+", 1290), (R09, "-", None),
]


# --------------------------------------------------------------------------- forge


def comment(cid: int, author: str, when: str, body: str) -> dict[str, Any]:
    return {"id": cid, "author": author, "created_at": when, "body": body}


def tickets(built: dict[str, Builder], shop: dict[str, str]) -> list[dict[str, Any]]:
    loop = "ouroboros-loop"
    op = "operator"
    vuln, clean = shop["vulnerable"][:7], shop["root"][:7]
    p38 = proposal(
        "draft-pr-late", ["jsonl"], [R03, R05, R01, R04],
        "a gated run's first draft pull request (`gh pr create --draft` with a pull request URL in its "
        "tool_result) comes later than the knee, or never comes before the run's last event",
        [GATED, 'draft_pr(R, T) :- the tool_result of a Bash "gh pr create --draft" in run R returns a '
                "pull request URL at T",
         "score(R, S) :- S is the seconds from the first event of run R to its first draft_pr, else to its "
         "last event"],
        [(R03, "+"), (R05, "+"), (R01, "-"), (R04, "-")], "2026-10-02")
    p41_old = proposal(
        "sleep-poll", ["jsonl"], [OLD_B], "a run waits on CI with `sleep` between `gh run view` polls",
        [GATED, 'poll(R, L) :- line L of run R is a Bash tool_use whose command has "sleep" and "gh run view"'],
        [(OLD_B, "+")], "2026-09-27")
    p41 = proposal(
        "sleep-poll", ["jsonl"], [R07, R01],
        "a run waits on CI by calling `sleep` between `gh run view` polls, or wraps `sleep` in a `while true` "
        "loop, instead of `gh run watch`",
        [GATED, 'poll(R, L) :- line L of run R is a Bash tool_use whose command has "sleep" and "gh run view"',
         'loop(R, L) :- line L of run R is a Bash tool_use whose command has "while true" and "sleep"',
         'watched(R) :- run R ran "gh run watch"'],
        [(R07, "+"), (R01, "-")], "2026-10-03")
    p48_old = proposal(
        "cache-ratio", ["jsonl"], [OLD_A],
        "a run's prompt-cache hit ratio `h_r` over its `result` usage is under the `0.9867` floor",
        [GATED, "score(R, S) :- S is 10000 x (1 - h_r) over the result lines of run R"],
        [(OLD_A, "+")], "2026-10-02")
    p50 = proposal(
        "self-merge", ["pull_request"], ["#58", "#52"],
        "a pull request has a commit whose `CSF-Session:` trailer is the merger's identity "
        "`ouroboros-merger/<pid>`",
        ['merger_commit(P, C) :- commit C of pull request P has a "CSF-Session: ouroboros-merger/" trailer'],
        [("#58", "+"), ("#52", "-")], "2026-10-03")
    p53 = proposal(
        "shell-true", ["file_at"], [vuln, clean],
        "a function passes a command string built from a `request.args` value to `subprocess.run` with "
        "`shell=True`",
        ['shell_call(F, L) :- line L of function F calls subprocess with "shell=True"',
         'tainted(F, L) :- the command at line L of F interpolates a parameter that a route fills from '
         '"request.args"'],
        [(vuln, "+"), (clean, "-")], "2026-10-02")

    def ts(run: str, s: int) -> str:
        return rfc3339(at(built[run].run.start) + timedelta(seconds=s))

    def posted(run: str, n: int) -> str:
        b = built[run]
        for line in b.lines:
            ev = line["event"]
            if ev["type"] == "user" and f"issues/{n}#issuecomment-" in str(ev["message"]["content"][0]["content"]):
                return line["ts"]
        raise AssertionError(n)

    out = [
        {"number": 38, "title": TICKET_TITLES[38],
         "body": "A fixer worked 50 minutes on #31 before anything showed up on the forge. Runs should open a "
                 "draft PR as soon as there is a commit, so the operator can see the work.\n\nFlag a gated run "
                 "whose first draft pull request comes later than a knee measured from the runs themselves.",
         "state": "open", "labels": ["mining"], "created_at": "2026-09-22T18:31:07Z",
         "comments": [
             comment(3362077310, op, "2026-09-22T18:40:52Z",
                     "The knee should be fitted, not picked: 5 minutes is too strict for a fresh miner."),
             comment(3378519202, op, ts(R03, 1140),
                     f"Run {R03} has been going 19 minutes with no draft PR. Adding it as a positive."),
             comment(3383377406, op, ts(R05, 1380),
                     f"{R05}: 23 minutes in, still nothing on the forge. Positive."),
             comment(3386640118, loop, "2026-10-02T09:10:44Z", p38),
         ]},
        {"number": 41, "title": TICKET_TITLES[41],
         "body": "Fixers wait on CI with `sleep 30; gh run view` over and over, or a `while true` loop with a "
                 "`sleep` in it. Each poll is a tool call and a cache refresh; `gh run watch` exists.",
         "state": "open", "labels": ["mining"], "created_at": "2026-09-25T21:02:19Z",
         "comments": [
             comment(3368102477, loop, "2026-09-27T09:12:03Z", p41_old),
             comment(3389917035, loop, "2026-10-03T09:14:26Z", p41),
         ]},
        {"number": 44, "title": TICKET_TITLES[44],
         "body": "`pkill -f PATTERN` run from the Bash tool matches the tool's own shell, whose command line "
                 "contains PATTERN: the shell dies with 143 and the agent believes the target is still "
                 "running. `pgrep -f` has the same problem and always prints a pid.",
         "state": "open", "labels": ["mining"], "created_at": "2026-09-26T16:44:50Z",
         "comments": [
             comment(3369930411, op, "2026-09-26T16:52:13Z", "Seen again tonight while a fixer ran slow tests."),
             comment(COMMENT_IDS[44], loop, posted(R09, 44), P44),
         ]},
        {"number": 45, "title": TICKET_TITLES[45],
         "body": "The spend panel's day starts at 00:00 UTC, so the fixer budget looks reset at 17:00 in Los "
                 "Angeles. The cap is per America/Los_Angeles day.",
         "state": "open", "labels": ["ops", "bug"], "created_at": "2026-09-27T02:15:40Z",
         "comments": [comment(3370412290, op, "2026-09-27T02:20:01Z", "Same for the fixer_spend_usd series.")]},
        {"number": 46, "title": TICKET_TITLES[46],
         "body": "The measurer counts struggles and the severity scale names gate escapes, but neither term is "
                 "in ruleset/vocabulary.toml. Add both, with the definitions the design uses.",
         "state": "open", "labels": ["LANG"], "created_at": "2026-09-30T15:27:33Z",
         "comments": [comment(3380226573, op, "2026-09-30T15:30:12Z",
                              "A struggle is a tool call whose result is an error or a gate denial.")]},
        {"number": 47, "title": TICKET_TITLES[47],
         "body": "A fixer ran the identical failing pytest command four times in a row without changing "
                 "anything in between. Flag runs that repeat an identical failing tool call three or more "
                 "times.",
         "state": "open", "labels": ["mining"], "created_at": "2026-09-30T19:08:26Z",
         "comments": [
             comment(3380731904, op, "2026-09-30T19:10:00Z", "Identical means the same tool and the same input."),
             comment(COMMENT_IDS[47], loop, posted(R09, 47), P47),
         ]},
        {"number": 48, "title": TICKET_TITLES[48],
         "body": "h_fleet clears the 0.9867 floor while most runs fall below it on their own ratio h_r. Flag "
                 "runs whose cache_read share of their result usage is under the floor.",
         "state": "open", "labels": ["mining"], "created_at": "2026-10-01T22:40:15Z",
         "comments": [
             comment(3384450107, loop, "2026-10-02T09:13:31Z", p48_old),
             comment(3386012954, op, "2026-10-02T10:02:48Z", "Rank the offenders by cost, not only by ratio."),
             comment(COMMENT_IDS[48], loop, posted(R09, 48), P48_MALFORMED),
         ]},
        {"number": 50, "title": TICKET_TITLES[50],
         "body": "NO-SELF-MERGE is enforced by the merge train; a miner over pull requests should flag any PR "
                 "whose commits carry the merger's identity in a `CSF-Session:` trailer, so it shows up in the "
                 "findings too.",
         "state": "open", "labels": ["mining"], "created_at": "2026-10-02T08:55:02Z",
         "comments": [
             comment(3386210655, op, "2026-10-02T09:00:37Z", "The merger's identity is ouroboros-merger/<pid>."),
             comment(3392418870, loop, "2026-10-04T09:06:12Z", p50),
         ]},
        {"number": 53, "title": TICKET_TITLES[53],
         "body": "example/shop's export endpoint builds a shell command from `request.args` and runs it with "
                 "`shell=True`. Find such functions at a revision of the repository.",
         "state": "open", "labels": ["mining", "security"], "created_at": "2026-10-01T17:48:59Z",
         "comments": [
             comment(3384001736, op, "2026-10-01T17:55:20Z",
                     f"{vuln} has it in shop/reports.py:export_report; {clean} does not."),
             comment(3386655091, loop, "2026-10-02T09:16:05Z", p53),
         ]},
    ]
    return out


def commit_sha(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def backtest_block(kappa: str, tp: str, fp: str, fn: str) -> str:
    return ("| Backtest | |\n| --- | --- |\n"
            f"| Backtest $\\kappa^\\star$ | {kappa} |\n| Backtest TP | {tp} |\n| Backtest FP | {fp} |\n"
            f"| Backtest FN | {fn} |\n")


def checks_block(checks: list[dict[str, Any]]) -> str:
    rows = "".join(f"| {c['name']} | `{c['command']}` | {c['exit_code']} |\n" for c in checks)
    return "| Check | Command | Exit |\n| --- | --- | --- |\n" + rows


def std_checks(miner: str, fail: str | None = None) -> list[dict[str, Any]]:
    checks = [
        {"name": "ruff", "command": f"ruff check miners/{miner}", "exit_code": 0},
        {"name": "miner_test", "command": f"python -m pytest miners/{miner} -q", "exit_code": 0},
        {"name": "operator_identifiers", "command": "python3 tools/check_operator_identifiers.py",
         "exit_code": 0},
    ]
    for c in checks:
        if c["name"] == fail:
            c["exit_code"] = 1
    return checks


def pulls(built: dict[str, Builder]) -> list[dict[str, Any]]:
    def created(run: str) -> str:
        b = built[run]
        assert b.draft_pr_at is not None
        return rfc3339(at(b.run.start) + timedelta(seconds=b.draft_pr_at))

    def msg(subject: str, body: str, session: str, model: str) -> str:
        return f"{subject}\n\n{body}\n\nCSF-Session: {session}\nCSF-Model: {model}\n"

    def commits(n: int, *messages: str) -> list[dict[str, str]]:
        return [{"sha": commit_sha(REPO, n, i, m), "message": m} for i, m in enumerate(messages)]

    def pr(n: int, title: str, body: str, state: str, draft: bool, labels: list[str], when: str,
           author: str, cs: list[dict[str, str]], checks: list[dict[str, Any]]) -> dict[str, Any]:
        return {"number": n, "title": title, "body": body, "state": state, "draft": draft, "labels": labels,
                "created_at": when, "base": "main", "head_sha": cs[-1]["sha"], "author": author,
                "commits": cs, "checks": checks}

    fixer = "csf-fixer"
    out = []
    c52 = std_checks("_template")
    out.append(pr(
        52, "draft-pr-late: count only a successful gh pr create (#38)",
        "Closes #38.\n\nThe template's extractor counted a failed `gh pr create --draft` as the draft pull "
        "request. It now needs a tool_result without `is_error`.\n\n<!-- agent-drafted -->\n\n"
        + backtest_block("468 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0; 2 candidates from `score`)",
                         f"1: {OLD_B}", "0", "0") + "\n" + checks_block(c52),
        "merged", False, ["miner"], created(R01), fixer,
        commits(52, msg("draft-pr-late: count only a successful gh pr create (#38)",
                        "A failed gh pr create must not end the invisible interval.", R01, OPUS)),
        c52))
    c55 = std_checks("self_merge")
    out.append(pr(
        55, "miner: self-merge flags the merger's identity in commits (#50)",
        "Refs #50. Draft: the fixtures have no positive yet.\n\n<!-- agent-drafted -->\n\n"
        + backtest_block("– (no positive label)", "0", "0", "1: #58") + "\n" + checks_block(c55),
        "open", True, ["miner"], created(R07), fixer,
        commits(55, msg("miner: self-merge flags the merger's identity in commits (#50)",
                        "Extracts CSF-Session trailers from pull request commits.", R07, SONNET),
                msg("self-merge: add the #52 fixture", "CI needs the fixture the labels name.", R07, SONNET)),
        c55))
    c56 = std_checks("sleep_poll", fail="miner_test")
    out.append(pr(
        56, "miner: sleep-poll flags CI polling with sleep (#41)",
        "Closes #41.\n\n<!-- agent-drafted -->\n\n"
        + backtest_block("– (rule has no knee)", f"1: {OLD_B}", "0", "0") + "\n" + checks_block(c56),
        "open", False, ["miner"], created(R03), fixer,
        commits(56, msg("miner: sleep-poll flags CI polling with sleep (#41)",
                        "poll and loop facts from Bash tool calls; watched(R) when gh run watch is used.",
                        R03, OPUS)),
        c56))
    c58 = std_checks("cache_ratio")
    out.append(pr(
        58, "miner: cache-ratio flags runs under the h_r floor (#48)",
        "Closes #48.\n\n<!-- agent-drafted -->\n\n"
        + backtest_block("1420 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0; 2 candidates from `score`)",
                         f"1: {OLD_A}", "0", "0") + "\n" + checks_block(c58),
        "open", False, ["miner"], created(R08), fixer,
        commits(58, msg("miner: cache-ratio flags runs under the h_r floor (#48)",
                        "score is 10000 x (1 - h_r) over the run's result usage.", R08, OPUS),
                "Merge branch 'main' into miner/cache-ratio-3e7b\n\nUpdated by the merge train before its "
                f"gate run.\n\nCSF-Session: {MERGER}\n"),
        c58))
    c59 = [{"name": "ruff", "command": "ruff check .", "exit_code": 0},
           {"name": "tests", "command": "python -m pytest -q", "exit_code": 0}]
    out.append(pr(
        59, "vocabulary: define struggle and gate escape (#46)",
        "Adds `struggle` and `gate_escape` to ruleset/vocabulary.toml (#46).\n\nLanguage change: no miner, no "
        "backtest.\n\n" + checks_block(c59),
        "open", False, ["LANG"], created(R05), fixer,
        commits(59, msg("vocabulary: define struggle and gate escape (#46)",
                        "Both terms as the measurer and the severity scale use them.", R05, OPUS),
                msg(f"Merge branch 'miner/vocabulary-e1a6' of github.com:{REPO} into miner/vocabulary-e1a6",
                    "The gate refused a force push over the stale remote branch.", R05, OPUS)),
        c59))
    c60 = std_checks("repeated_failure")
    out.append(pr(
        60, "miner: repeated-failure flags identical failing retries (#47)",
        "Closes #47.\n\n<!-- agent-drafted -->\n\n"
        + backtest_block("3 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0; 3 candidates from `score`)",
                         f"1: {OLD_B}", "0", "0") + "\n" + checks_block(c60),
        "open", False, ["miner"], created(R04), fixer,
        commits(60, msg("miner: repeated-failure flags identical failing retries (#47)",
                        "streak facts over identical failing tool calls; score is the longest streak.",
                        R04, OPUS)),
        c60))
    return out


# --------------------------------------------------------------------------- output


def shop_commits(out: Path) -> dict[str, str]:
    pushes = [json.loads(line) for line in (out / "pushes.jsonl").read_text().splitlines() if line.strip()]
    return {"root": pushes[0]["base"], "vulnerable": pushes[1]["head"]}


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    args = [a for a in argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else here
    shop = shop_commits(here)
    built: dict[str, Builder] = {}
    for scenario in SCENARIOS:
        run = scenario()
        b = Builder(run)
        lines = b.build()
        built[run.run_id] = b
        path = out / "runs" / run.run_id / "events.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        if run.draft_pr is not None:
            assert b.draft_pr_at is not None, run.run_id
    rows = []
    for run_id, sign, flagged in sorted(LABELS, key=lambda lab: built[lab[0]].run.start):
        start = at(built[run_id].run.start)
        flag = rfc3339(start + timedelta(seconds=flagged)) if flagged is not None else "-"
        rows.append(f"{run_id}\t{sign}\t{rfc3339(start)}\t{flag}\toperator\n")
    (out / "labels.tsv").write_text("".join(rows))
    for kind, items in (("tickets", tickets(built, shop)), ("pulls", pulls(built))):
        folder = out / "forge" / kind
        folder.mkdir(parents=True, exist_ok=True)
        for item in items:
            (folder / f"{item['number']}.json").write_text(json.dumps(item, ensure_ascii=False, indent=2) + "\n")
    if "--summary" in argv:
        for run_id, b in built.items():
            last = (at(b.lines[-1]["ts"]) - at(b.lines[0]["ts"])).seconds
            print(f"{run_id}  lines={len(b.lines):3d} tools={b.total_tool_calls:3d} errors={b.total_errors:2d} "
                  f"results={b.result_costs} folded=${b.folded_cost} draft_pr_s={b.draft_pr_at} last_s={last}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
