"""The ops page in headless Chromium, against the real API server (uvicorn) on a seeded event log.

Chromium comes from Debian (``apt-get install chromium``; ``.ci/run`` installs it) and is driven by
Playwright's Python package: no browser download. Without it the test is skipped with the reason, except
under CI, where it fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from _ops_seed import REFUSAL, Seeded, seed

from ouroboros_gates.ops.api.serve import server_options
from ouroboros_gates.schemas import LabelerRun, LabelerStatus
from ouroboros_gates.schemas.settings import Settings

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str:
    found = (
        os.environ.get("OURO_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    reason = None
    if not found:
        reason = "chromium is not installed (apt-get install chromium; .ci/run installs it)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright package is missing (pip install -e '.[dev]')"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: the ops page must be tested under CI")
        pytest.skip(reason)
    assert found is not None
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serving(settings: Settings) -> Iterator[str]:
    """The API on ``settings`` behind a real uvicorn server on a free 127.0.0.1 port, in a background
    thread."""
    port = _free_port()
    options = server_options(settings, catch_up_every_s=0.5)  # the protocol and bounds ``ouro serve`` uses
    server = uvicorn.Server(uvicorn.Config(**options, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the API server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    """A seeded log behind a real uvicorn server."""
    seeded = seed(tmp_path)
    _write_labeler(seeded, LabelerStatus.RUNNING)
    with _serving(seeded.settings) as url:
        yield seeded, url


@contextlib.contextmanager
def _loaded(driver: Any, chromium: str, url: str) -> Iterator[tuple[Any, list[str]]]:
    """The ops page at ``url`` in headless Chromium, loaded, and the page errors it reports."""
    browser = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + "/")
        page.wait_for_selector("body[data-loaded='true']", timeout=20_000)
        yield page, errors
    finally:
        browser.close()


def _write_labeler(seeded: Seeded, status: LabelerStatus) -> None:
    started = seeded.measured_at
    done = status is LabelerStatus.COMPLETED
    run = LabelerRun(
        started=started,
        ended=started if done else None,
        tickets=(105, 71, 199),
        batches=7 if done else 2,
        candidates=300,
        accepted=5 if done else 1,
        rejected=2,
        model="qwen3:8b",
        keep_alive_s=38.5,
        status=status,
    )
    path = seeded.settings.state_dir / "labeler.json"
    path.write_text(run.model_dump_json(indent=2))


def _points(page: Any, plot: str) -> int:
    d = page.get_attribute(f"#{plot} path.line", "d")
    assert d, f"{plot} has no line"
    return int(d.count("L") + d.count("M"))


def test_ops_page_in_headless_chromium(served: tuple[Seeded, str]) -> None:
    from playwright.sync_api import expect, sync_playwright

    seeded, url = served
    with sync_playwright() as driver, _loaded(driver, _chromium(), url) as (page, errors):
        # The series as plots: six weeks, eighteen days of runs, the compounding with its band.
        assert _points(page, "plot-weekly") == 6
        assert _points(page, "plot-daily") == 18
        assert _points(page, "plot-compounding-week") >= 1
        assert page.locator("#plot-compounding-week path.band").count() == 1
        expect(page.locator("#headline")).to_contain_text("compounding per week")
        expect(page.locator("#headline")).to_contain_text("95% interval")
        expect(page.locator("#empty")).to_be_hidden()

        # Findings: this tenant's two and acme's generic one; acme's tenant-scoped finding never shows.
        rows = page.locator("#findings tr.finding")
        expect(rows).to_have_count(3)
        expect(page.locator("#findings")).not_to_contain_text("secret")
        rows.first.click()
        where = page.locator("#findings tr.proof .where").first
        expect(where).to_be_visible()
        expect(where).to_have_text(f"{seeded.run_file}:1")
        expect(page.locator("#findings tr.proof pre.source").first).to_contain_text("session_start")
        expect(page.locator("#findings tr.proof")).to_contain_text('score("run-w5d4", 1259)')

        # Spend against the cap (0: fixers off), and the merge train with its refusal line.
        expect(page.locator("#spend")).to_contain_text("$1.25 of $0.00")
        expect(page.locator("#spend")).to_contain_text("fixers are off")
        expect(page.locator("#merges")).to_contain_text("refused")
        expect(page.locator("#merges")).to_contain_text(REFUSAL)
        expect(page.locator("#merges")).to_contain_text("merged")

        # The labeler panel follows labeler.json live.
        expect(page.locator("#labeler")).to_contain_text("running")
        _write_labeler(seeded, LabelerStatus.COMPLETED)
        expect(page.locator("#labeler")).to_contain_text("completed", timeout=10_000)

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ops-page.png"), full_page=True)
        assert not errors, errors


def test_a_fresh_state_shows_what_to_do_not_an_error(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    chromium = _chromium()
    settings = Settings(state=tmp_path / "fresh", broker_url="memory://")
    with (
        _serving(settings) as url,
        sync_playwright() as driver,
        _loaded(driver, chromium, url) as (page, errors),
    ):
        empty = page.locator("#empty")
        expect(empty).to_be_visible()
        expect(empty).to_contain_text("No run recorded yet: nothing to measure.")
        expect(empty).to_contain_text("ouro hooks install")
        expect(empty).to_contain_text("ouro ingest PATH")
        expect(page.locator("#headline")).not_to_contain_text("none yet")  # measured when the server started
        expect(page.locator("#plot-weekly")).to_contain_text("no points yet")
        assert not errors, errors
