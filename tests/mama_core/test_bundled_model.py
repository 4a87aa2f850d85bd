"""A bundle's prebuilt default model is used as it is: a first start converts nothing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from mama_core.embeddings import ModelError, load_embedder
from mama_core.embeddings.convert import (
    BUNDLED_MANIFEST,
    BUNDLED_MODELS_DIR,
    DEFAULT_EMBEDDING_MODEL,
    MINILM,
    ensure_default_model_with_id,
    write_bundled_manifest,
)


@pytest.fixture
def bundle_dir(tmp_path: Path, model_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PyInstaller-like data folder holding the converted default model and its manifest."""
    built, model_id = ensure_default_model_with_id(model_cache_dir)
    models = tmp_path / "bundle" / BUNDLED_MODELS_DIR
    models.mkdir(parents=True)
    shipped = models / built.name
    shutil.copyfile(built, shipped)
    write_bundled_manifest(models, shipped, model_id)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "bundle"), raising=False)
    return models


def test_the_bundled_model_is_used_and_nothing_is_converted(
    bundle_dir: Path, tmp_path: Path, model_cache_dir: Path
) -> None:
    cache = tmp_path / "empty-cache"
    embedder = load_embedder(None, cache)
    assert embedder.model_path.parent == bundle_dir
    assert not cache.exists()
    # Same model id as a checkout's conversion, so stores move between the two.
    manifest = json.loads((bundle_dir / BUNDLED_MANIFEST).read_text("utf-8"))
    _, checkout_id = ensure_default_model_with_id(model_cache_dir)
    assert embedder.model_id == manifest["model_id"] == checkout_id
    assert manifest["name"] == DEFAULT_EMBEDDING_MODEL
    assert embedder.embed_one("a short sentence").shape == (embedder.dim,)


def test_a_bundle_without_the_chosen_model_builds_it(
    bundle_dir: Path, model_cache_dir: Path
) -> None:
    """The bundle ships the default model only; the owner's other choice is built (here
    MiniLM from its package) instead of the shipped file being used under its name."""
    path, model_id = ensure_default_model_with_id(model_cache_dir, name=MINILM)
    assert path.parent == model_cache_dir
    assert model_id.startswith("all-MiniLM-L6-v2-")
    shipped, shipped_id = ensure_default_model_with_id(model_cache_dir)
    assert shipped.parent == bundle_dir and shipped_id != model_id  # control


def test_an_unknown_builtin_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no built-in embedding model"):
        load_embedder(None, tmp_path / "cache", builtin="gpt-embed-9")


def test_a_checkout_converts_into_its_cache(
    model_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    path, _ = ensure_default_model_with_id(model_cache_dir)
    assert path.parent == model_cache_dir


def test_an_incomplete_bundled_model_is_refused(bundle_dir: Path, tmp_path: Path) -> None:
    for gguf in bundle_dir.glob("*.gguf"):
        gguf.unlink()
    with pytest.raises(ModelError, match="reinstall MAMA"):
        load_embedder(None, tmp_path / "cache")
