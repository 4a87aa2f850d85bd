"""Questions and stored notes embedded in their roles, whatever the embedder supports.

Models such as multilingual-e5 want ``query: `` before a question and
``passage: `` before stored text. ``RoleEmbedder`` gives the benchmark one
embedder with an ``embed(texts, role=…)`` that works in three modes:

- ``native``: the wrapped embedder's ``embed`` takes a ``role`` parameter (found
  by its signature), and is given the role (as a string, or as the member of the
  enum its annotation names); the model adds whatever the role means to it.
- ``prefix``: it does not, and ``--role-prefixes`` asked for the e5 text
  prefixes, which are then put before each text here.
- ``none``: neither; both roles embed the bare text (MiniLM's way).

The engine embeds stored text (``passage``) through the view it is given, passing
its role; the benchmark embeds questions itself with ``role="query"``. MAMA's own
``GgufEmbedder`` takes roles, so it is always ``native`` (MiniLM's roles add nothing).
Each role's vectors are cached apart (``CachedEmbedder``), under
a model id that names the role and the mode, so a cache never mixes them.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.embedding_cache import CachedEmbedder, Progress
from mama_core.embeddings.base import Embedder

QUERY = "query"
PASSAGE = "passage"
PREFIXES = {QUERY: "query: ", PASSAGE: "passage: "}
_ROLE_NAMES = {"query": QUERY, "passage": PASSAGE, "document": PASSAGE}


def role_name(role: object) -> str:
    """``query`` or ``passage`` for a role given as a string or an enum member."""
    raw = getattr(role, "value", role)
    name = _ROLE_NAMES.get(str(raw).lower()) if isinstance(raw, str) else None
    if name is None and isinstance(role, enum.Enum):
        name = _ROLE_NAMES.get(role.name.lower())
    if name is None:
        raise ValueError(f"unknown embedding role {role!r}: expected query or passage")
    return name


def role_parameter(embedder: object) -> inspect.Parameter | None:
    """The ``role`` parameter of ``embedder.embed``, or None when it has none."""
    embed = getattr(embedder, "embed", None)
    if embed is None:
        return None
    try:
        return inspect.signature(embed).parameters.get("role")
    except (TypeError, ValueError):
        return None


def role_argument(embedder: object, role: str) -> object:
    """``role`` in the form ``embedder.embed`` takes: its enum's member, or the string."""
    hint: object = None
    try:
        hint = typing.get_type_hints(getattr(type(embedder), "embed")).get("role")  # noqa: B009
    except Exception:  # unresolvable annotations: fall back to the string
        hint = None
    candidates = [hint, *typing.get_args(hint)] if hint is not None else []
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            for member in candidate:
                if role_name(member) == role:
                    return member
    return role


class RoleView:
    """An ``Embedder`` that embeds every text in one role (what ``CachedEmbedder`` wraps)."""

    def __init__(self, inner: Embedder, role: str, mode: str) -> None:
        self.inner = inner
        self.role = role
        self.mode = mode
        self._argument = role_argument(inner, role) if mode == "native" else None

    @property
    def model_id(self) -> str:
        if self.mode == "none":
            return self.inner.model_id  # both roles are the bare text: one cache
        return f"{self.inner.model_id}|{self.mode}={self.role}"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str], role: object = None) -> np.ndarray:
        """The view's role decides; a ``role`` the engine passes (always ``passage`` for
        the stored text it embeds through this view) is accepted and not used."""
        if self.mode == "native":
            embed = typing.cast(typing.Any, self.inner).embed
            return np.asarray(embed(list(texts), role=self._argument), dtype=np.float32)
        if self.mode == "prefix":
            texts = [PREFIXES[self.role] + t for t in texts]
        return np.asarray(self.inner.embed(list(texts)), dtype=np.float32)

    def embed_one(self, text: str, role: object = None) -> np.ndarray:
        return self.embed([text], role)[0]


class RoleEmbedder:
    """One embedder for the engine and the benchmark, embedding each text in its role."""

    def __init__(self, inner: Embedder, *, prefixes: bool, cache_dir: Path | None = None) -> None:
        self.inner = inner
        if role_parameter(inner) is not None:
            self.mode = "native"
        else:
            self.mode = "prefix" if prefixes else "none"
        query = CachedEmbedder(RoleView(inner, QUERY, self.mode), cache_dir)
        passage = (
            query
            if self.mode == "none"
            else CachedEmbedder(RoleView(inner, PASSAGE, self.mode), cache_dir)
        )
        self._views = {QUERY: query, PASSAGE: passage}

    @property
    def model_id(self) -> str:
        """The wrapped model's id, marked when the prefixes are added here."""
        suffix = "+role-prefixes" if self.mode == "prefix" else ""
        return self.inner.model_id + suffix

    @property
    def dim(self) -> int:
        return self.inner.dim

    def describe(self) -> str:
        """One line saying how roles reach the model."""
        if self.mode == "native":
            return "native (the embedder's embed(role=…))"
        if self.mode == "prefix":
            return f"text prefixes {PREFIXES[QUERY]!r} / {PREFIXES[PASSAGE]!r} added by the bench"
        return "none (questions and notes embedded as they are)"

    def embed(self, texts: Sequence[str], role: object = PASSAGE) -> np.ndarray:
        """Vectors of ``texts`` in ``role`` (stored text unless told otherwise)."""
        return self._views[role_name(role)].embed(texts)

    def embed_one(self, text: str, role: object = PASSAGE) -> np.ndarray:
        return self.embed([text], role)[0]

    def prefetch(self, texts: Sequence[str], role: str, progress: Progress | None = None) -> None:
        """Embed and cache whichever of ``texts`` the cache lacks, in ``role``."""
        self._views[role_name(role)].prefetch(texts, progress)

    @property
    def hits(self) -> int:
        return sum(v.hits for v in self._unique_views())

    @property
    def misses(self) -> int:
        return sum(v.misses for v in self._unique_views())

    def _unique_views(self) -> list[CachedEmbedder]:
        return list({id(v): v for v in self._views.values()}.values())

    def close(self) -> None:
        for view in self._unique_views():
            view.close()
