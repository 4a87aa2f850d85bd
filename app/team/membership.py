"""Where this machine keeps its team credentials: the join string (a ``postgresql://``
URL with the member role's password) in the OS keyring, and beside the data folder a
``team.json`` with what is not secret (the role and where the server is), so
``mama team status`` can say who this is even when the keyring or the server is away.

The admin's URL (from ``mama team init``) is kept the same way, for ``mama team invite``.
There is no plain-file fallback: with no working keyring, join and init say so.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote

from app.local import os_keyring
from app.local.log_redaction import register_secret
from app.team.errors import NotJoinedError, TeamKeyringError
from app.team.urls import check_url, where

log = logging.getLogger(__name__)

KEYRING_SERVICE = "mama"
FILE_NAME = "team.json"


@dataclass(frozen=True)
class Membership:
    role: str
    server: str
    """host:port/database, for a person."""
    scopes: tuple[str, ...] = ()
    """The role's grants when it joined (status shows them when the server is away)."""


def member_account(home: Path) -> str:
    return f"team:{home.resolve()}"


def admin_account(home: Path) -> str:
    return f"team-admin:{home.resolve()}"


def save_membership(home: Path, url: str, scopes: list[str]) -> Membership:
    """Keep ``url`` in the keyring and what is not secret in ``team.json``."""
    parts = check_url(url)
    membership = Membership(unquote(parts.username or ""), where(url), tuple(scopes))
    _keyring_set(member_account(home), url)
    home.mkdir(parents=True, exist_ok=True)
    path = home / FILE_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(membership), indent=2) + "\n", "utf-8")
    os.replace(tmp, path)
    return membership


def load_membership(home: Path) -> Membership | None:
    path = home / FILE_NAME
    if not path.exists():
        return None
    data = json.loads(path.read_text("utf-8"))
    return Membership(
        str(data["role"]), str(data["server"]), tuple(str(s) for s in data.get("scopes", ()))
    )


def member_url(home: Path) -> str:
    """The join string kept at ``mama team join``; ``team_not_joined`` if there is none."""
    if load_membership(home) is None:
        raise NotJoinedError("this MAMA has not joined a team: run `mama team join STRING`.")
    url = _keyring_get(member_account(home))
    if not url:
        raise TeamKeyringError(
            "the team credentials are not in the OS keyring any more: run `mama team join "
            "STRING` again with the join string your team's admin gave you."
        )
    return url


def forget_membership(home: Path) -> Membership | None:
    membership = load_membership(home)
    try:
        os_keyring.delete_password(KEYRING_SERVICE, member_account(home))
    except Exception as exc:  # no entry, or no usable keyring: nothing to forget
        log.info("no team credentials removed from the keyring: %s", type(exc).__name__)
    (home / FILE_NAME).unlink(missing_ok=True)
    return membership


def save_admin_url(home: Path, url: str) -> None:
    _keyring_set(admin_account(home), url)


def admin_url(home: Path) -> str:
    url = _keyring_get(admin_account(home))
    if not url:
        raise NotJoinedError(
            "no team admin URL is kept here: run `mama team init URL` on this machine first, "
            "or give the admin's URL with --admin-url (or MAMA_TEAM_ADMIN_URL)."
        )
    return url


def _keyring_set(account: str, url: str) -> None:
    try:
        os_keyring.set_password(KEYRING_SERVICE, account, url)
    except Exception as exc:  # any keyring backend failure means: no usable keyring
        raise TeamKeyringError(
            "no usable OS keyring to keep the team credentials in "
            f"({type(exc).__name__}); MAMA keeps them nowhere else."
        ) from exc


def _keyring_get(account: str) -> str | None:
    try:
        url = os_keyring.get_password(KEYRING_SERVICE, account)
    except Exception as exc:
        raise TeamKeyringError(
            f"no usable OS keyring to read the team credentials from ({type(exc).__name__})."
        ) from exc
    if url:
        check_url(url)  # registers its password as a secret
        register_secret(url)
    return url
