"""The team store as the long-lived parts see it — ``mama mcp`` and the Claude Code
hooks: searched on demand over the member's own role, and *away* in one line when it
cannot be, so a coding agent's personal memory keeps working with the server down.

Built only for a MAMA that joined a team (``team.json`` beside the data folder); the
PostgreSQL client is imported at the first search, never by a process that does not
reach the team.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.team.errors import (
    TeamClientMissingError,
    TeamKeyringError,
    TeamModelMismatchError,
    TeamUnreachableError,
)
from app.team.membership import load_membership, member_url
from mama_core.embeddings.base import Embedder

if TYPE_CHECKING:
    from psycopg import Connection as PgConnection

    from app.team.store import TeamHit

    Connection = PgConnection[tuple[object, ...]]

AWAY_ERRORS = (
    TeamUnreachableError,  # and credentials refused
    TeamKeyringError,
    TeamClientMissingError,
    TeamModelMismatchError,
)
"""What leaves the team's results out (said in one line) rather than failing the search:
none of them is about what was asked."""


@dataclass(frozen=True)
class TeamSearch:
    hits: tuple[TeamHit, ...]
    away: str | None = None
    """``code: message`` when the team's results are left out, else None."""


class TeamReach:
    """Read the team store as this member, one short connection per read (the
    credentials are read from the keyring then, so a re-join takes effect at once)."""

    def __init__(self, url: Callable[[], str], connect_timeout: int = 5) -> None:
        self._url = url
        self._connect_timeout = connect_timeout

    @classmethod
    def for_home(cls, home: Path, connect_timeout: int = 5) -> TeamReach | None:
        """The reach of the MAMA at ``home``, or None when it has not joined a team."""
        if load_membership(home) is None:
            return None
        return cls(lambda: member_url(home), connect_timeout)

    def search(
        self,
        embedder: Embedder,
        query: str,
        limit: int,
        scopes: Sequence[str] = (),
        kinds: Sequence[str] = (),
    ) -> TeamSearch:
        """The best ``limit`` team memories this member may read (in ``scopes``, default
        all it was granted), the query embedded by ``embedder`` (the team's model); a bad
        scope is refused, an absent server is *away*."""

        def read(conn: Connection) -> list[TeamHit]:
            from app.team.store import TeamStore

            return TeamStore(conn, embedder).search(query, limit, scopes, kinds)

        return self._read(read)

    def latest(self, limit: int) -> TeamSearch:
        """The newest ``limit`` active team memories this member may read (no model)."""

        def read(conn: Connection) -> list[TeamHit]:
            from app.team.store import latest_memories

            return latest_memories(conn, limit)

        return self._read(read)

    def _read(self, read: Callable[[Connection], list[TeamHit]]) -> TeamSearch:
        try:
            from app.team.connection import connect

            conn = connect(self._url(), timeout=self._connect_timeout)
        except AWAY_ERRORS as exc:
            return TeamSearch((), f"{exc.code}: {exc.message}")
        try:
            return TeamSearch(tuple(read(conn)))
        except AWAY_ERRORS as exc:
            return TeamSearch((), f"{exc.code}: {exc.message}")
        finally:
            conn.close()
