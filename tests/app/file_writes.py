"""Finds the places in MAMA's code that write a file (for the copies registry's test).

A *site* is ``module:qualified.function`` holding a call that writes or copies a
file: ``open``/``Path.open``/``os.fdopen`` with a writing mode, ``write_text``,
``write_bytes``, ``shutil.copy*``/``move``/``copytree``, ``os.replace``/``rename``,
``Path.rename``/``Path.replace``, ``os.open``, ``tempfile.mkstemp``/
``NamedTemporaryFile``, a SQLite ``.backup(``, a logging ``FileHandler``, or SQL
text that makes a copy (``VACUUM INTO``, ``ATTACH DATABASE``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SHUTIL_CALLS = {"copy", "copy2", "copyfile", "copytree", "copyfileobj", "move"}
WRITING_ATTRS = {
    "write_text",
    "write_bytes",
    "mkstemp",
    "NamedTemporaryFile",
    "backup",
    "FileHandler",
    "RotatingFileHandler",
    "TimedRotatingFileHandler",
}
MODULE_CALLS = {("os", "replace"), ("os", "rename"), ("os", "open"), ("os", "link")}
COPYING_SQL = ("VACUUM INTO", "ATTACH DATABASE", "ATTACH '")


def _mode(call: ast.Call, position: int) -> str | None:
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)  # pyright: ignore[reportAttributeAccessIssue]
    return None


def _writes(mode: str | None) -> bool:
    return mode is not None and any(c in mode for c in "wax+")


def writing_call(node: ast.AST) -> str | None:
    """What ``node`` writes with, if it is a file-writing call or copying SQL."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        upper = node.value.upper()
        return next((f"sql:{s}" for s in COPYING_SQL if s in upper), None)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        if func.id == "open" and _writes(_mode(node, 1)):
            return "open"
        if func.id in WRITING_ATTRS or func.id in SHUTIL_CALLS:
            return func.id
        return None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if (owner, func.attr) in MODULE_CALLS:
        return f"{owner}.{func.attr}"
    if owner == "shutil" and func.attr in SHUTIL_CALLS:
        return f"shutil.{func.attr}"
    if func.attr == "fdopen" and _writes(_mode(node, 1)):
        return "fdopen"
    if func.attr == "open" and owner not in ("os", "io") and _writes(_mode(node, 0)):
        return ".open"
    if func.attr in ("rename", "replace") and owner != "os":
        # Path.rename/replace take one argument; str.replace takes two.
        one = len(node.args) == 1 and not node.keywords
        if one and not isinstance(node.args[0], ast.Constant):
            return f".{func.attr}"
        return None
    if func.attr in WRITING_ATTRS:
        return f".{func.attr}"
    return None


def sites_in_source(source: str, module: str) -> Iterator[tuple[str, str]]:
    """``(site, what)`` for each file write in ``source``."""
    tree = ast.parse(source)

    def visit(node: ast.AST, scope: list[str]) -> Iterator[tuple[str, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from visit(child, [*scope, child.name])
                continue
            what = writing_call(child)
            if what is not None:
                yield f"{module}:{'.'.join(scope) or '<module>'}", what
            yield from visit(child, scope)

    yield from visit(tree, [])


def sites_in_tree(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Every file-writing site under ``packages`` of ``root``: site -> what it calls."""
    found: dict[str, set[str]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            for site, what in sites_in_source(path.read_text("utf-8"), module):
                found.setdefault(site, set()).add(what)
    return found
