"""Other projects' code a project ships is left out of a scan by default, each file with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from ouroboros_gates.decider.folder import LeaveOut, read_folder
from ouroboros_gates.decider.vendored import vendored_by_content, vendored_by_path


@pytest.mark.parametrize(
    "path",
    [
        "static/js/vendor/chart.js",
        "app/vendor/lib.py",
        "web/jquery-3.6.0.js",
        "web/app.min.js",
        "assets/bootstrap.bundle.js",
        "third_party/zlib/inflate.c",
        "public/js/lodash.js",
    ],
)
def test_vendored_by_path(path: str) -> None:
    assert vendored_by_path(path) is not None


@pytest.mark.parametrize("path", ["static/js/app.js", "src/vendors.py", "web/chartist_config.js", "admin.py"])
def test_own_code_by_path(path: str) -> None:
    assert vendored_by_path(path) is None


def test_a_licence_banner_or_minified_lines_mark_a_bundled_library() -> None:
    assert vendored_by_content(
        "static/lib.js", ["/*! jQuery v3.4.1 | (c) JS Foundation | jquery.org/license */"]
    )
    assert vendored_by_content("static/x.js", ["/**", " * @license MIT", " */"])
    assert vendored_by_content("static/app.js", ["var a=1;" * 400])
    assert vendored_by_content("static/app.js", ["// our app", "export function f() {}"]) is None
    assert vendored_by_content("app.py", ["/*! not a script */"]) is None


def test_a_scan_leaves_vendored_code_out_with_its_reason_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "static" / "vendor").mkdir(parents=True)
    (tmp_path / "static" / "vendor" / "lib.js").write_text("eval(location.hash)\n")
    (tmp_path / "static" / "app.min.js").write_text("eval(location.hash)\n")
    (tmp_path / "static" / "bundle.js").write_text("/*! Widget v1.2.3 (c) Someone, MIT License */\neval(x)\n")
    (tmp_path / "static" / "app.js").write_text("eval(location.hash)\n")
    scan = read_folder([tmp_path])
    assert sorted(scan.parsed) == ["static/app.js"]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["static/vendor"].startswith("left out: vendored code")
    assert reasons["static/app.min.js"].startswith("left out: minified code")
    assert reasons["static/bundle.js"].startswith("left out: a bundled library")
    everything = read_folder([tmp_path], leave_out=LeaveOut(vendored=True))
    assert len(everything.parsed) == 4
    given = read_folder([tmp_path / "static" / "app.min.js"], tmp_path)  # a path given as PATH is read
    assert sorted(given.parsed) == ["static/app.min.js"]
