"""The ops page as the operator's console, in headless Chromium, against a fleet on Redis: a real ``celery
worker`` answering the broker and running a probe, messages waiting on a queue, the seeded loop and decider;
every panel filled, and every action taken from the page (with the token typed in) recorded as its event.
Also: the API's documentation at ``/docs`` renders offline, every request to this server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _ops_seed import DEAD_KEPT, DEAD_OLD, FLOW, Seeded, _commit, _finding, seed
from test_ops_page import ARTIFACTS, _chromium, _loaded, _serving

from ouroboros_gates.ops.status import workers_at_work
from ouroboros_gates.schemas import FindingDerived, Probe, Scope
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import build_app, declare_queues, publish

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "console-token"
DASH = "\u2013"  # the en dash of the pager's range, "1-10 of 15"


def _worker(settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OURO_BROKER_URL": str(settings.broker_url), "OURO_STATE": str(settings.state_dir)}
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ouroboros_gates.workers.app",
        "worker",
        "-Q",
        "fleet",
        "-c",
        "1",
        "-n",
        "console@%h",
        "-l",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
    ]
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _more_findings(seeded: Seeded) -> None:
    """Twelve more findings of this tenant, so that the findings page in pages."""
    for week in range(4):
        for day in (0, 2, 4):
            run = f"run-w{week}d{day}"
            finding = FindingDerived(run=run, finding=_finding(run, seeded.run_file, Scope.TENANT))
            _commit(seeded.store, f"finding-{run}", f"run/{run}", finding)


@pytest.fixture
def fleet(tmp_path: Path, redis_url: str) -> Iterator[tuple[Seeded, Settings]]:
    """The seeded log, one worker on Redis running a long probe, and two messages waiting on a queue."""
    seeded = seed(tmp_path)
    _more_findings(seeded)
    settings = Settings(state=seeded.settings.state, broker_url=redis_url, api_token=TOKEN)
    sender = build_app(settings, include=False)
    declare_queues(sender)
    worker = _worker(settings, tmp_path / "worker.log")
    try:
        for _ in range(300):
            if workers_at_work(sender).workers:
                break
            time.sleep(0.1)
        publish(Probe(message_id="console-probe-0001", probe="console", hold_s=120), via=sender)
        for n in range(2):
            sender.send_task("decider.decide", args=[{}], queue="decider", task_id=f"console-waiting-{n}")
        for _ in range(300):
            if workers_at_work(sender).running:
                break
            time.sleep(0.1)
        yield seeded, settings
    finally:
        os.killpg(worker.pid, signal.SIGKILL)  # the probe holds for minutes: nothing of it is needed after
        worker.wait()


def _types(seeded: Seeded) -> list[str]:
    return [e.type for e in seeded.store.read(limit=100_000)]


def _text(page: Any, selector: str) -> str:
    return str(page.locator(selector).inner_text())


def test_every_panel_is_filled_and_every_action_is_an_event(fleet: tuple[Seeded, Settings]) -> None:
    from playwright.sync_api import expect, sync_playwright

    seeded, settings = fleet
    with (
        _serving(settings) as url,
        sync_playwright() as driver,
        _loaded(driver, _chromium(), url) as (page, errors),
    ):
        _health(page, expect)
        _decisions(page, expect)
        _gates_and_offenders(page, expect)
        _findings(page, expect)
        _queue_and_zone(page, expect)
        _actions(page, expect, seeded)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ops-console.png"), full_page=True)
        for panel in (
            "health",
            "decisions",
            "gates",
            "offenders",
            "labels",
        ):  # each panel alone, for the docs
            page.locator(f"#{panel}-panel").screenshot(path=str(ARTIFACTS / f"ops-{panel}.png"))
        assert not errors, errors


def _health(page: Any, expect: Any) -> None:
    expect(page.locator('[data-card="workers"] .value')).to_have_text("1", timeout=15_000)
    expect(page.locator('[data-card="workers"]')).to_contain_text("console@")
    expect(page.locator("#running")).to_contain_text("fleet.probe")
    expect(page.locator('#queues tr[data-queue="decider"] td.number')).to_have_text("2")
    expect(page.locator('[data-card="dead-lettered"] .value')).to_have_text("2")
    expect(page.locator('[data-card="outbox backlog"] .value')).to_have_text("0")
    expect(page.locator("#projections tbody tr")).to_have_count(17)
    expect(page.locator("#dead-letters tbody tr")).to_have_count(2)
    expect(page.locator(f'#dead-letters tr[data-message="{DEAD_OLD}"] button.retry')).to_be_disabled()


def _decisions(page: Any, expect: Any) -> None:
    rows = page.locator("#decisions tbody tr.decision")
    expect(rows).to_have_count(4)
    expect(page.locator("#decision-counts")).to_have_text("block 1 · advisory 2 · drop 1")
    page.select_option("#decision-repo", "acme/web")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("a path joined from a form field")
    page.select_option("#decision-repo", "")
    page.select_option("#decision-point", "block")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(FLOW)
    expect(rows.first).to_contain_text("user input reaches a shell unsanitised")
    page.select_option("#decision-point", "")
    expect(rows).to_have_count(4)


def _gates_and_offenders(page: Any, expect: Any) -> None:
    gate = page.locator('#gates tr[data-miner="draft-pr-late"]')
    expect(gate).to_contain_text("κ* 468")
    expect(gate).to_contain_text("TP 1 FP 0 FN 0")
    expect(gate).to_contain_text("1.00 (floor 0.80)")
    expect(page.locator("#hfleet")).to_contain_text("generic gates")
    expect(page.locator("#offenders tbody tr")).to_have_count(2)  # the two cold runs, lowest h_r first
    expect(page.locator("#offenders tbody tr").first).to_contain_text("run-w0d")


def _findings(page: Any, expect: Any) -> None:
    rows = page.locator("#findings tr.finding")
    expect(page.locator("#findings-count")).to_have_text("(15)")
    page.select_option("#finding-limit", "10")
    expect(rows).to_have_count(10)
    expect(page.locator("#findings-pager .range")).to_have_text(f"1{DASH}10 of 15")
    page.click("#findings-pager button.next")
    expect(page.locator("#findings-pager .range")).to_have_text(f"11{DASH}15 of 15")
    expect(rows).to_have_count(5)
    page.select_option("#finding-scope", "generic")
    expect(rows).to_have_count(2)
    expect(page.locator("#findings-pager .range")).to_have_text(f"1{DASH}2 of 2")
    page.select_option("#finding-scope", "")
    page.click('#findings th[data-sort="run"]')
    expect(page.locator('#findings th[data-sort="run"]')).to_have_attribute("data-order", "asc")
    runs = [page.locator("#findings tr.finding td:nth-child(4)").nth(i).inner_text() for i in range(10)]
    assert runs == sorted(runs)
    page.click('#findings th[data-sort="run"]')
    expect(page.locator('#findings th[data-sort="run"]')).to_have_attribute("data-order", "desc")
    expect(rows.first.locator("td:nth-child(4)")).to_have_text("run-w5d4")
    page.fill("#finding-q", "w3d2")
    page.dispatch_event("#finding-q", "change")
    expect(rows).to_have_count(1)
    rows.first.click()
    expect(page.locator("#findings tr.proof .where").first).to_be_visible()


def _queue_and_zone(page: Any, expect: Any) -> None:
    expect(page.locator("#verdicts")).to_contain_text("launch")
    expect(page.locator("#verdicts")).to_contain_text("needs_labels")
    expect(page.locator("#requests")).to_contain_text("#71")
    expect(page.locator("#labels tbody tr")).to_have_count(2)
    expect(page.locator("#zone")).to_have_text("all times America/Los_Angeles")
    pacific = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d P[SD]T$")
    for selector in (
        "#merges tbody tr td:nth-child(4)",
        "#requests tbody tr td:nth-child(5)",
        "#gates tbody td:nth-child(5)",
    ):
        assert pacific.match(_text(page, f"{selector} >> nth=0")), selector
    expect(page.locator("#labeler")).to_contain_text("completed")


def _actions(page: Any, expect: Any, seeded: Seeded) -> None:
    status = page.locator("#action-status")
    retry = page.locator(f'#dead-letters tr[data-message="{DEAD_KEPT}"] button.retry')
    retry.click()
    expect(status).to_contain_text("enter the API token")
    page.fill("#token", "not-the-token")
    page.click("#token-form button")
    retry.click()
    expect(status).to_contain_text("the token was refused")
    page.fill("#token", TOKEN)
    page.click("#token-form button")
    expect(page.locator("#token-state")).to_have_text("set for this tab")

    page.fill("#retry-note", "the lock is gone")
    retry.click()
    expect(page.locator(f'#dead-letters tr[data-message="{DEAD_KEPT}"] td.retried')).to_contain_text(
        "retry 1 sent"
    )
    page.fill("#dismiss-note", "the input is an enum")
    page.locator('#decisions tr[data-function="checkout"] button.dismiss').click()
    expect(page.locator('#decisions tr[data-function="checkout"] td.dismissed')).to_contain_text(
        "the input is an enum"
    )
    page.click("#replay-form button")
    expect(page.locator("#replays tbody tr").first).to_contain_text("draft-pr-late")
    expect(page.locator("#replays tbody tr").first.locator("td:nth-child(3)")).to_have_text("1")
    label = page.locator("#labels tbody tr", has_text="run-w5d4")
    page.fill("#review-note", "a brief, not an offense")
    label.locator("button.reject").click()
    expect(label.locator("td.operator")).to_contain_text("rejected")
    expect(label.locator("button.reject")).to_be_disabled()
    kinds = _types(seeded)
    for kind in ("DeadLetterRetried", "DecisionDismissed", "BacktestReplayed", "LabelReviewed"):
        assert kinds.count(kind) == 1, kind


def test_the_api_documentation_renders_offline(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    settings = Settings(state=tmp_path / "s", broker_url="memory://")
    with _serving(settings) as url, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=_chromium(), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            asked: list[str] = []
            page.on("request", lambda request: asked.append(request.url))
            page.goto(f"{url}/docs")
            operations = sum(
                len(item) for item in page.request.get(f"{url}/openapi.json").json()["paths"].values()
            )
            expect(page.locator(".opblock")).to_have_count(operations, timeout=20_000)
            expect(page.locator(".auth-wrapper .authorize")).to_be_visible()  # the bearer scheme
            assert asked and all(u.startswith(url) or u.startswith("data:") for u in asked), asked
        finally:
            browser.close()
