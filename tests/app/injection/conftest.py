"""Fixtures for the injection tests: real stores, the real agent CLIs from npm, and a
real Dovecot for the mail connector."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.app.backends.conftest import claude_bin, codex_bin
from tests.app.connectors.dovecot_server import Dovecot, dovecot_binary, running_dovecot
from tests.app.runtime.support import clock, embedder, engine, runtime_db, store

__all__ = ["claude_bin", "clock", "codex_bin", "embedder", "engine", "runtime_db", "store"]


@pytest.fixture
def mail_server() -> Iterator[Dovecot]:
    """A fresh Dovecot over TLS (the mail connector's real server)."""
    if dovecot_binary() is None:
        pytest.skip("dovecot is not installed (Debian package dovecot-imapd; .ci/run installs it)")
    with running_dovecot() as running:
        yield running
