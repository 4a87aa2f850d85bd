"""What a caller may do: which actions, in which scopes, and where saves go.

The owner's grant covers everything. An agent grant lists its scopes and can
never hold an owner-only action; constructing one that does is an error, so a
misconfigured front end fails loudly instead of handing out purge.

Which actions exist, and which are the owner's alone, is declared here by the
registry (``dispatcher.mutation`` / ``dispatcher.query`` call ``declare_action``),
so grants sit below the verbs and never import them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from mama_core.errors import NotGrantedError
from mama_core.scopes.names import GLOBAL, check_scope_name


class ActionAccess(NamedTuple):
    """Who may hold a declared action."""

    owner_only: bool
    for_agents: bool


_ACCESS: dict[str, ActionAccess] = {}
"""Every declared action's access, in declaration (catalog) order."""


def declare_action(name: str, *, owner_only: bool, for_agents: bool) -> None:
    """Make ``name`` grantable: called once per verb by the action registry."""
    if name in _ACCESS:
        raise ValueError(f"action {name} is declared twice")
    _ACCESS[name] = ActionAccess(owner_only, for_agents and not owner_only)


def all_actions() -> frozenset[str]:
    """Every declared action (the owner's grant holds them all)."""
    return frozenset(_declared())


def owner_only_actions() -> frozenset[str]:
    """The actions never granted to an agent."""
    return frozenset(n for n, a in _declared().items() if a.owner_only)


def agent_actions() -> frozenset[str]:
    """What an agent grant holds by default: never an owner-only action."""
    return frozenset(n for n, a in _declared().items() if a.for_agents)


def _declared() -> dict[str, ActionAccess]:
    if not _ACCESS:
        # mama_core.memory's __init__ imports the catalog, which registers every verb;
        # an empty table means the grant was built before any verb existed (a bug).
        raise RuntimeError("no actions are declared yet: import mama_core.memory first")
    return _ACCESS


@dataclass(frozen=True)
class Grant:
    """The actions and scopes a caller holds; empty scopes read nothing and write nothing."""

    actions: frozenset[str]
    scopes: frozenset[str]
    all_scopes: bool = False
    default_scope: str | None = None

    def __post_init__(self) -> None:
        for name in self.scopes:
            check_scope_name(name)
        if self.default_scope is not None:
            check_scope_name(self.default_scope)
            if not self.all_scopes and self.default_scope not in self.scopes:
                raise ValueError(f"default scope {self.default_scope} is not among the scopes")

    @classmethod
    def owner(cls, default_scope: str = GLOBAL) -> Grant:
        """The owner's own grant: every action, every scope."""
        return cls(
            actions=all_actions(),
            scopes=frozenset(),
            all_scopes=True,
            default_scope=default_scope,
        )

    @classmethod
    def agent(
        cls,
        scopes: Iterable[str],
        default_scope: str | None = None,
        actions: Iterable[str] | None = None,
    ) -> Grant:
        """An agent's grant over ``scopes``; owner-only actions are refused.

        With one scope and no ``default_scope``, saves go to that scope.
        """
        scope_set = frozenset(scopes)
        wanted = agent_actions() if actions is None else frozenset(actions)
        forbidden = sorted(wanted & owner_only_actions())
        if forbidden:
            raise NotGrantedError(
                f"Owner-only actions cannot be granted to an agent: {', '.join(forbidden)}.",
                details={"actions": forbidden},
            )
        unknown = sorted(wanted - all_actions())
        if unknown:
            raise ValueError(f"unknown actions in grant: {', '.join(unknown)}")
        if default_scope is None and len(scope_set) == 1:
            default_scope = next(iter(scope_set))
        return cls(actions=wanted, scopes=scope_set, default_scope=default_scope)

    def narrowed(self, scopes: frozenset[str]) -> Grant:
        """The same grant seeing only ``scopes`` (which the caller checked are granted)."""
        default = self.default_scope if self.default_scope in scopes else None
        return replace(self, scopes=scopes, all_scopes=False, default_scope=default)

    def sees(self, scopes: Iterable[str]) -> bool:
        """Whether a record bound to ``scopes`` is visible under this grant."""
        return self.all_scopes or not self.scopes.isdisjoint(scopes)
