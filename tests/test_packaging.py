"""The package as a team installs it: the built wheel in a fresh virtualenv, used from an empty folder, beside
another distribution's top-level ``llm`` package."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from ouroboros_gates import __version__

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

FLASK_APP = """import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/ping")
def ping():
    host = request.args["host"]
    return subprocess.run(f"ping -c 1 {host}", shell=True, capture_output=True).stdout
"""


def _wheel_of_llm(folder: Path) -> Path:
    """A distribution named llm whose top-level package is ``llm``, as the popular CLI's is."""
    wheel = folder / "llm-0.19-py3-none-any.whl"
    files = {
        "llm/__init__.py": "NOT_OURS = True\n",
        "llm-0.19.dist-info/METADATA": "Metadata-Version: 2.1\nName: llm\nVersion: 0.19\n",
        "llm-0.19.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: "
        "py3-none-any\n",
    }
    files["llm-0.19.dist-info/RECORD"] = "".join(
        f"{name},,\n" for name in [*files, "llm-0.19.dist-info/RECORD"]
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh virtualenv holding the built wheel and llm; the dependencies are this environment's."""
    where = tmp_path_factory.mktemp("install")
    dist = where / "dist"
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(dist)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("ouroboros_gates-*.whl"))
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
    subprocess.run([*pip, str(_wheel_of_llm(dist)), str(wheel)], check=True, capture_output=True)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([str(python), "-c", purelib], text=True).strip())
    # Installed after the wheel, so pip saw none of them: this environment's dependencies (the checkout's own
    # editable path is in a .pth of that folder, which a path added this way never reads).
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return wheel, venv


def _run(
    venv: Path, *args: str, cwd: Path, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OURO_", "PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        cwd=cwd,
        env={**clean, "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_wheel_holds_one_top_level_package(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        names = set(archive.namelist())
    assert tops == {"ouroboros_gates", f"ouroboros_gates-{__version__}.dist-info"}
    packages = (
        "schemas",
        "harness",
        "forge",
        "llm",
        "events",
        "miners",
        "decider",
        "workers",
        "ops",
        "ruleset",
    )
    assert all(f"ouroboros_gates/{name}/__init__.py" in names for name in packages)
    assert "ouroboros_gates/examples/forge/tickets/53.json" in names  # the sample corpus and forge ship
    assert f"ouroboros_gates-{__version__}.dist-info/licenses/LICENSE" in names


def test_installed_beside_llm_it_imports_its_own(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, venv = installed
    code = (
        "import llm, ouroboros_gates.llm as ours; print(llm.__file__, llm.NOT_OURS, ours.MAX_IN_FLIGHT > 0)"
    )
    done = _run(venv, "python", "-c", code, cwd=tmp_path)
    theirs, flag, ok = done.stdout.split()
    assert done.returncode == 0 and theirs.startswith(str(venv)) and flag == "True" and ok == "True"
    version = _run(venv, "ouro", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.splitlines()[0] == f"ouro {__version__}"
    triggers = _run(venv, "ouro", "triggers", "-n", "1", cwd=tmp_path, OURO_STATE=str(tmp_path / "state"))
    cited = Path(triggers.stdout.rsplit("installed at ", 1)[1].strip())  # the guide it cites is installed
    assert triggers.returncode == 0 and cited.is_file() and cited.is_relative_to(venv)


def test_loop_and_scan_from_an_empty_folder(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, venv = installed
    state = {"OURO_STATE": str(tmp_path / "state")}
    looped = _run(venv, "ouro", "loop", cwd=tmp_path, **state)
    assert looped.returncode == 0, looped.stdout + looped.stderr
    assert "sample corpus shipped with the package" in looped.stdout and "Findings: " in looped.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "state"
    ]  # nothing written into the folder it ran in
    app = tmp_path / "app"
    app.mkdir()
    (app / "views.py").write_text(FLASK_APP)
    out = tmp_path / "report"
    scanned = _run(
        venv, "ouro", "scan", str(app), "--out", str(out), "--fail-on", "never", cwd=tmp_path, **state
    )
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["candidates"] >= 1  # the route's command injection, decided
    assert isinstance(json.loads((out / "findings.json").read_text()), list)


def test_hooks_install_and_serve(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, venv = installed
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    state = {"OURO_STATE": str(tmp_path / "state")}
    hooked = _run(venv, "ouro", "hooks", "install", cwd=repo, **state)
    assert hooked.returncode == 0, hooked.stdout + hooked.stderr
    assert (repo / ".git" / "hooks" / "pre-push").is_file()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OURO_", "PYTHON", "VIRTUAL_ENV"))}
    server = subprocess.Popen(
        [str(venv / "bin" / "ouro"), "serve", "--port", str(port), "--api-only"],
        cwd=tmp_path,
        env={**clean, **state},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        answer = None
        for _ in range(240):
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/ouroboros", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.5)
        assert answer is not None and answer.status_code == 200
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
