"""Connecting to the team's PostgreSQL, with its errors translated where they enter."""

from __future__ import annotations

import re

from app.team.errors import (
    CredentialsRefusedError,
    TeamClientMissingError,
    TeamInputError,
    TeamUnreachableError,
)

try:
    import psycopg
except ImportError as exc:  # psycopg's "no pq wrapper available": libpq did not load
    raise TeamClientMissingError(
        "the PostgreSQL client library (libpq) cannot be loaded on this machine "
        f"({exc.args[0].splitlines()[-1].strip(' -') if exc.args else exc}); "
        "install your system's libpq and GnuTLS packages (Debian/Ubuntu: libpq5 libgnutls30)."
    ) from exc
from app.team.urls import check_url, where

CONNECT_TIMEOUT_SECONDS = 5
# libpq's words when the server answered and refused the role (no SQLSTATE on a failed
# connection to switch on).
_REFUSED = re.compile(
    r"password authentication failed|role \"[^\"]*\" does not exist|no password supplied"
    r"|not permitted to log in"
)


def connect(
    url: str, *, autocommit: bool = False, timeout: int = CONNECT_TIMEOUT_SECONDS
) -> psycopg.Connection[tuple[object, ...]]:
    """A connection to the team store, or ``team_unreachable`` in one line after at most
    ``timeout`` seconds (libpq's ``connect_timeout``: whole seconds, at least 2)."""
    check_url(url)
    try:
        return psycopg.connect(url, connect_timeout=timeout, autocommit=autocommit)
    except psycopg.OperationalError as exc:
        if _REFUSED.search(str(exc)):
            raise CredentialsRefusedError(
                f"the team store at {where(url)} refused these credentials: {first_line(exc)}"
            ) from exc
        raise TeamUnreachableError(
            f"the team store at {where(url)} cannot be reached: {first_line(exc)}"
        ) from exc
    except psycopg.ProgrammingError as exc:  # a malformed connection string
        raise TeamInputError(f"the team store URL is not usable: {first_line(exc)}") from exc


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
