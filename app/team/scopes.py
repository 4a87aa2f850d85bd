"""Team scope names: ``team:NAME`` and its children ``team:NAME/CHILD/...``.

Stricter than the personal scopes (``mama_core.scopes.names``): lowercase letters,
digits, ``-`` and ``_`` per part, so a name reads the same on every screen and in the
row-level security policies, which match a child by the prefix ``NAME/``.
"""

from __future__ import annotations

import re

from app.team.errors import TeamInputError

PREFIX = "team:"
_TEAM_SCOPE = re.compile(r"team:[a-z0-9][a-z0-9_-]{0,62}(?:/[a-z0-9][a-z0-9_-]{0,62}){0,7}")


def is_team_scope(name: str) -> bool:
    """Whether ``name`` asks for the team store (well-formed or not)."""
    return name.startswith(PREFIX)


def check_team_scope(name: str) -> str:
    """``name`` if it is a well-formed team scope, else a ``team_invalid_input`` error."""
    if _TEAM_SCOPE.fullmatch(name):
        return name
    raise TeamInputError(
        f"{name!r} is not a team scope: write team:NAME or team:NAME/CHILD, with lowercase "
        "letters, digits, '-' and '_'."
    )


def parse_scope_list(text: str) -> list[str]:
    """``team:eng,team:eng/web`` as a list of checked team scopes, in order, no repeats."""
    scopes: list[str] = []
    for part in text.split(","):
        name = check_team_scope(part.strip())
        if name not in scopes:
            scopes.append(name)
    if not scopes:
        raise TeamInputError("name at least one team scope, e.g. --scopes team:eng")
    return scopes


def covers(granted: str, scope: str) -> bool:
    """Whether a grant of ``granted`` covers ``scope`` (itself or a child of it); the
    same rule as the policies' ``mama_team.scope_granted``."""
    return scope == granted or scope.startswith(granted + "/")
