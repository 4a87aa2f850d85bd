"""What every command shares: the folders, the settings, the key and the store."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from app.keys import ResolvedKey, resolve_key
from app.paths import Paths
from app.settings import Settings
from mama_core.store import Store


def ask_passphrase_in_terminal(prompt: str, confirm: bool) -> str:
    return str(click.prompt(prompt, hide_input=True, confirmation_prompt=confirm, err=True))


@dataclass
class CliContext:
    paths: Paths
    _settings: Settings | None = None
    _key: ResolvedKey | None = None
    _store: Store | None = None
    opened: list[Store] = field(default_factory=list)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.load(self.paths.settings)
        return self._settings

    @property
    def key(self) -> ResolvedKey:
        if self._key is None:
            ask = ask_passphrase_in_terminal if sys.stdin.isatty() else None
            self._key = resolve_key(self.paths.db, ask)
        return self._key

    def store(self) -> Store:
        """The store, opened once per command and closed when it ends."""
        if self._store is None:
            self._store = Store.open(self.paths.db, self.key.key)
            click.get_current_context().call_on_close(self._store.close)
        return self._store

    @property
    def model_path(self) -> Path | None:
        return self.settings.embedding_model_path
