"""Team store URLs (``postgresql://USER:PASSWORD@HOST:PORT/DB``): checked, shown without
the password, and rewritten for a member. No driver here, so the command line can read
them without loading psycopg."""

from __future__ import annotations

from urllib.parse import SplitResult, quote, unquote, urlsplit, urlunsplit

from app.local.log_redaction import register_secret
from app.team.errors import TeamInputError


def check_url(url: str) -> SplitResult:
    """``url`` split, if it is a ``postgresql://`` URL; its password is registered as a
    secret so no log shows it."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise TeamInputError("the team store is named by a postgresql://USER:PASSWORD@HOST/DB URL")
    if parts.password:
        register_secret(unquote(parts.password))
    return parts


def where(url: str) -> str:
    """Host, port and database of ``url`` for a person (never the user's password)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host:  # a Unix socket: ?host=/path
        for pair in parts.query.split("&"):
            name, _, value = pair.partition("=")
            if name == "host":
                host = unquote(value)
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path or '/'}"


def with_user(url: str, user: str, password: str) -> str:
    """``url`` with its user and password replaced (the member's join string)."""
    parts = check_url(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
