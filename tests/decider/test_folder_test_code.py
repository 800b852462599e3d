"""Which paths are test code: the test runners' own conventions, matched on a path's name or a folder it is
in."""

from __future__ import annotations

import pytest

from ouroboros_gates.decider.folder import is_test_code


@pytest.mark.parametrize(
    "path",
    [
        "tests/views.py",
        "test/a/b.c",
        "src/test/java/shop/CartTest.java",
        "test_views.py",
        "pkg/views_test.py",
        "conftest.py",
        "server/handler_test.go",
        "web/__tests__/cart.js",
        "web/cart.test.tsx",
        "web/cart.spec.ts",
        "CartTests.java",
        "CartTest.php",
        "/home/u/shop/tests",
    ],
)
def test_test_code(path: str) -> None:
    assert is_test_code(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/flask/testing.py",
        "latest.py",
        "contest.py",
        "app_tests/views.py",
        "testcode/BenchmarkTest00001.java",
        "attestation/sign.py",
        "web/spec.js",
        "pytest_plugin.py",
        "Tester.java",
        ".",
    ],
)
def test_not_test_code(path: str) -> None:
    assert not is_test_code(path)
