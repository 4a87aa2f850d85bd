"""The layers point down only: ui → app → mama_core. Read with ast, so a lazy
import inside a function is caught too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

FORBIDDEN = {
    "mama_core": {
        "app",
        "ui",
        "PySide6",
        "shiboken6",
        "qasync",
        "telegram",
        "mcp",
        "slack_sdk",
        "httpx",
        "keyring",
        "click",
        "rich",
    },
    "app": {"ui", "PySide6", "shiboken6", "qasync"},
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_import_reader_sees_lazy_imports(tmp_path: Path) -> None:
    # Positive control for the reader itself.
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from PySide6.QtCore import QObject\n    import telegram.ext\n")
    assert imported_roots(sample) == {"PySide6", "telegram"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_downward(package: str) -> None:
    files = sorted((REPO_ROOT / package).rglob("*.py"))
    assert files, f"no sources found for {package}"
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(imported_roots(path) & FORBIDDEN[package])
        for path in files
        if imported_roots(path) & FORBIDDEN[package]
    }
    assert offenders == {}
