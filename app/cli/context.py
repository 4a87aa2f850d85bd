"""What every command shares: the folders, the settings, the key, the store
and the engine, each made once per command and closed when it ends."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from app.admin.copies import follow_purges
from app.local.chain_anchor import StoreAnchors, held_data_marks
from app.local.keys import ResolvedKey, resolve_key
from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.json_types import JsonObject
from mama_core.store import Store

if TYPE_CHECKING:
    from mama_core.embeddings import GgufEmbedder
    from mama_core.memory import Engine, Receipt, VerifyReport
    from mama_core.memory.inputs import MutationInput
    from mama_core.memory.results import ActionResult

ResultT = TypeVar("ResultT", bound="ActionResult")


def ask_passphrase_in_terminal(prompt: str, confirm: bool) -> str:
    return str(click.prompt(prompt, hide_input=True, confirmation_prompt=confirm, err=True))


@dataclass
class CliContext:
    paths: Paths
    dev_memory: bool = False
    """Commands act on the coding agents' store (``dev-memory.db``) instead."""
    _settings: Settings | None = None
    _key: ResolvedKey | None = None
    _store: Store | None = None
    _embedder: GgufEmbedder | None = None
    _engine: Engine | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.load(self.paths.settings)
        return self._settings

    @property
    def key(self) -> ResolvedKey:
        if self._key is None:
            ask = ask_passphrase_in_terminal if sys.stdin.isatty() else None
            self._key = resolve_key(self.db_path, ask)
        return self._key

    def store(self) -> Store:
        """The store, opened once per command and closed when it ends."""
        if self._store is None:
            # A command may only read: another process's write lock must not stop it.
            self._store = Store.open(
                self.db_path,
                self.key.key,
                check_writable=False,
                held_data_marks=held_data_marks(self.db_path, self.paths.config),
            )
            click.get_current_context().call_on_close(self._store.close)
        return self._store

    @property
    def db_path(self) -> Path:
        if self.dev_memory:
            from app.mcp.dev_memory import dev_memory_path

            return dev_memory_path(self.paths)
        return self.paths.db

    @property
    def model_path(self) -> Path | None:
        return self.settings.embedding_model_path

    def embedder(self) -> GgufEmbedder:
        """The configured embedder; building the default model shows a progress bar."""
        if self._embedder is None:
            from app.cli.progress import model_progress
            from mama_core.embeddings import load_embedder

            with model_progress() as progress:
                self._embedder = load_embedder(
                    self.model_path,
                    self.paths.cache,
                    progress,
                    builtin=self.settings.embedding_model,
                )
        return self._embedder

    def engine(self) -> Engine:
        if self._engine is None:
            from app.durable.journal import reply_observations
            from mama_core.memory import Engine, EngineConfig

            store = self.store()
            # One command, then exit: no need to follow other processes' commits.
            config = EngineConfig(
                tombstone_threshold=self.settings.tombstone_threshold, commit_poll_seconds=None
            )
            engine = Engine(
                store, self.embedder(), config, self.anchors(), replies=reply_observations
            )
            self._engine = engine
            follow_purges(engine, self.paths.home)
            # Registered after the store's close, so it runs first (LIFO).
            click.get_current_context().call_on_close(engine.close)
        return self._engine

    def owner_dispatch(self, action: str, payload: JsonObject) -> JsonObject:
        """Run ``action`` as the owner at the command line."""
        from mama_core.memory import Grant, SessionFacts

        return self.engine().dispatch(
            action, payload, SessionFacts.owner_cli(), Grant.owner(default_scope="global")
        )

    def owner_read(self, model: type[ResultT], action: str, payload: JsonObject) -> ResultT:
        """Run the read ``action`` as the owner at the command line; its result model."""
        from mama_core.memory import Grant, SessionFacts

        return self.engine().read_as(
            model, action, payload, SessionFacts.owner_cli(), Grant.owner(default_scope="global")
        )

    def owner_mutate(self, inp: MutationInput) -> Receipt:
        """Run the mutation ``inp`` is the input of, as the owner at the command line."""
        from mama_core.memory import Grant, SessionFacts

        return self.engine().mutate(
            inp, SessionFacts.owner_cli(), Grant.owner(default_scope="global")
        )

    def anchors(self) -> StoreAnchors:
        """Both copies of the store's chain anchor (beside it, and in the config folder)."""
        store = self.store()
        return StoreAnchors(self.db_path, self.paths.config, store.store_id)

    def verify(self) -> VerifyReport:
        from app.durable.schema import expected_series
        from mama_core.memory import verify_store

        store = self.store()
        reader = store.new_connection()
        try:
            anchors = self.anchors().load_all()
            return verify_store(reader, store.secret, anchors, expected_series())
        finally:
            reader.close()
