"""The package's public surface is its __init__: a sorted __all__, every name importable."""

from __future__ import annotations

from ouroboros_gates import miners


def test_all_is_sorted_and_complete() -> None:
    assert miners.__all__ == sorted(miners.__all__, key=lambda name: (not name.isupper(), name))
    for name in miners.__all__:
        assert hasattr(miners, name), name


def test_the_pure_core_imports_no_celery_or_sqlalchemy() -> None:
    import ast
    from pathlib import Path

    for path in Path(miners.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not imported & {"celery", "sqlalchemy", "kombu"}, path
