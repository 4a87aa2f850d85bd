"""``mama team invite``: a member is a LOGIN role of their own, in the member group, with
grants to the team scopes named; the join string is a ``postgresql://`` URL of that role."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import psycopg
from psycopg import sql

from app.local.log_redaction import register_secret
from app.team.errors import TeamError, TeamInputError
from app.team.schema import MEMBER_GROUP
from app.team.urls import with_user

ROLE_PREFIX = "mama_"
_MEMBER_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")


@dataclass(frozen=True)
class Invitation:
    member: str
    role: str
    scopes: tuple[str, ...]
    join_string: str
    """Shown once: the role's password is nowhere else."""


def role_name(member: str) -> str:
    if not _MEMBER_NAME.fullmatch(member):
        raise TeamInputError(
            f"{member!r} is not a member name: lowercase letters, digits and '_', "
            "starting with a letter."
        )
    return ROLE_PREFIX + member


def invite_member(
    conn: psycopg.Connection[tuple[object, ...]], admin_url: str, member: str, scopes: list[str]
) -> Invitation:
    """Create ``member``'s role with a new random password and grant it ``scopes``."""
    role = role_name(member)
    password = secrets.token_urlsafe(24)
    register_secret(password)
    with conn.transaction():
        taken = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if taken is not None:
            raise TeamError(
                f"a role {role} already exists; choose another name, or drop it first "
                f"(DROP ROLE {role}) to invite {member} again."
            )
        # Utility statements take no bound parameters: the password goes in as a
        # client-side quoted literal.
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(role), sql.Literal(password), sql.Identifier(MEMBER_GROUP)
            )
        )
        dbname = conn.info.dbname
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(dbname), sql.Identifier(role)
            )
        )
        for scope in scopes:
            conn.execute(
                "INSERT INTO mama_team.grants (role_name, scope) VALUES (%s, %s)", (role, scope)
            )
    return Invitation(member, role, tuple(scopes), with_user(admin_url, role, password))


def granted_scopes(conn: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    """The scopes the connected role holds (its own rows of ``grants``)."""
    rows = conn.execute(
        "SELECT scope FROM mama_team.grants WHERE role_name = current_user ORDER BY scope"
    ).fetchall()
    return [str(r[0]) for r in rows]
