"""Fixtures for the MCP server and the Claude Code plugin: a real encrypted
development-memory store, the real embedding model, and MCP clients that
connect to the server in memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client

from app.mcp.project_scope import ProjectBinding
from app.mcp.server import build_server
from mama_core.embeddings import GgufEmbedder, load_embedder
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT, TEST_KEY_HEX

PLUGIN_DIR = REPO_ROOT / "resources" / "claude-code-plugin"
VENV_BIN = REPO_ROOT / ".venv" / "bin"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> GgufEmbedder:
    """The real default model, built once per machine into the test cache."""
    return load_embedder(None, model_cache_dir)


@pytest.fixture
def dev_db(tmp_path: Path) -> Path:
    return tmp_path / "home" / "dev-memory.db"


@pytest.fixture
def store(dev_db: Path, db_key: DbKey) -> Iterator[Store]:
    opened = Store.open(dev_db, db_key)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def engine(store: Store, embedder: GgufEmbedder) -> Iterator[Engine]:
    with Engine(store, embedder) as opened:
        yield opened


@pytest.fixture
def alpha() -> ProjectBinding:
    return ProjectBinding("alpha")


def mcp_client(
    engine: Engine,
    binding: ProjectBinding,
    name: str = "test-agent",
    version: str = "1.2.3",
    mode: str = "auto",
) -> Client:
    """An in-memory client session to a server over ``engine`` bound to ``binding``."""
    return Client(
        build_server(engine, binding),
        client_info=types.Implementation(name=name, version=version),
        mode=mode,
    )


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """A tool result's JSON (the structured content, checked against the text)."""
    assert isinstance(result.structured_content, dict)
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    if not result.is_error:
        assert json.loads(first.text) == result.structured_content
    return result.structured_content


def error_code(result: types.CallToolResult) -> str:
    """The catalog code of an error result (and its text starts with it)."""
    assert result.is_error, result
    error = structured(result)["error"]
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    assert first.text == f"{error['code']}: {error['message']}"
    return str(error["code"])


def owner_dispatch(engine: Engine, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The owner acting at the command line (to seed or inspect the store)."""
    return engine.dispatch(action, payload, SessionFacts.owner_cli(), Grant.owner())


@pytest.fixture
def mama_env(tmp_path: Path, model_cache_dir: Path) -> dict[str, str]:
    """Environment for a ``mama`` subprocess: its own data and cache folders, the test
    key, the built model linked into the cache, ``mama`` on PATH, no MAMA_* leaks."""
    home = tmp_path / "home"
    cache = tmp_path / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    for model in model_cache_dir.glob("*.gguf"):
        (cache / model.name).symlink_to(model)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAMA_")}
    env.update(
        MAMA_HOME=str(home),
        MAMA_CACHE_DIR=str(cache),
        MAMA_DB_KEY=TEST_KEY_HEX,
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def git_project(parent: Path, name: str) -> Path:
    """A fresh git work tree called ``name`` (its folder name is the project)."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is needed to derive a project from a work tree")
    folder = parent / name
    folder.mkdir(parents=True)
    subprocess.run([git, "init", "-q", str(folder)], check=True, timeout=30)
    return folder
