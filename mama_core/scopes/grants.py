"""What a caller may do: which actions, in which scopes, and where saves go.

The owner's grant covers everything. An agent grant lists its scopes and can
never hold an owner-only action; constructing one that does is an error, so a
misconfigured front end fails loudly instead of handing out purge.

Which actions exist, and which are the owner's alone, grants read from the one
action registry (``mama_core.action_registry``, where each verb registers), so
grants sit below the verbs and never import them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from mama_core.action_registry import ACTIONS
from mama_core.errors import NotGrantedError
from mama_core.scopes.names import GLOBAL, check_scope_name


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
            actions=ACTIONS.all_actions(),
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
        wanted = ACTIONS.agent_actions() if actions is None else frozenset(actions)
        forbidden = sorted(wanted & ACTIONS.owner_only_actions())
        if forbidden:
            raise NotGrantedError(
                f"Owner-only actions cannot be granted to an agent: {', '.join(forbidden)}.",
                details={"actions": forbidden},
            )
        unknown = sorted(wanted - ACTIONS.all_actions())
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
