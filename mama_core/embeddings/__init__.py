"""Sentence embeddings for recall: a protocol, a llama.cpp implementation, and our converter.

``load_embedder`` is the one entry point the rest of MAMA uses: with no configured
file it converts (once) and loads a built-in model by name (multilingual-e5-small
unless all-MiniLM-L6-v2 is chosen); with a configured GGUF path it loads that file,
failing with ``ModelError`` when it cannot.
"""

from __future__ import annotations

from pathlib import Path

from mama_core.embeddings.base import PASSAGE, QUERY, Embedder, Role
from mama_core.embeddings.convert import (
    BUILTIN_MODELS,
    DEFAULT_EMBEDDING_MODEL,
    ConvertProgress,
    default_model_source,
    ensure_default_model,
    ensure_default_model_with_id,
)
from mama_core.embeddings.errors import ModelError
from mama_core.embeddings.gguf import GgufEmbedder

__all__ = [
    "BUILTIN_MODELS",
    "DEFAULT_EMBEDDING_MODEL",
    "ConvertProgress",
    "Embedder",
    "GgufEmbedder",
    "ModelError",
    "PASSAGE",
    "QUERY",
    "Role",
    "default_model_source",
    "ensure_default_model",
    "load_embedder",
]


def load_embedder(
    model_path: Path | None,
    cache_dir: Path,
    progress: ConvertProgress | None = None,
    *,
    builtin: str | None = None,
) -> GgufEmbedder:
    """The embedder MAMA should use: ``model_path`` if configured, else the built-in model
    ``builtin`` (None: the default, ``DEFAULT_EMBEDDING_MODEL``).

    A built-in model is converted into ``cache_dir`` on first use and reused after.
    A configured path is checked here (its metadata is read, cheaply), so a wrong
    setting fails at start-up rather than at the first recall.
    """
    if model_path is None:
        path, model_id = ensure_default_model_with_id(cache_dir, progress, name=builtin)
        return GgufEmbedder(path, model_id=model_id)
    embedder = GgufEmbedder(Path(model_path))
    _ = embedder.dim
    return embedder
