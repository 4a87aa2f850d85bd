"""The one action registry: every verb by name and by input model, and who may hold it.

Each verb registers here once, where its handler lives (``dispatcher.mutation`` /
``dispatcher.query``, run when ``mama_core.memory.actions`` is imported). The
dispatcher, the catalog, proposed changes and the grants all read this one object;
grants ask it which verbs exist and which are the owner's alone, so they sit below
the verbs and never import them. It sits beside ``model.py`` and knows an action only
through ``Registrable``. A grant made before any verb is registered holds no action,
so it fails closed (every call refused ``not_granted``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel


class Registrable(Protocol):
    """What the registry reads of an action (``dispatcher.ActionSpec`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def input_model(self) -> type[BaseModel]: ...

    @property
    def owner_only(self) -> bool: ...

    @property
    def for_agents(self) -> bool: ...


SpecT = TypeVar("SpecT", bound=Registrable)


class ActionRegistry(Mapping[str, SpecT]):
    """The registered actions by name, in registration (catalog) order; each input
    model belongs to one action."""

    def __init__(self) -> None:
        self._by_name: dict[str, SpecT] = {}
        self._by_model: dict[type[BaseModel], SpecT] = {}

    def register(self, spec: SpecT) -> None:
        """Add ``spec``; a name or input model registered twice is a bug."""
        if spec.name in self._by_name or spec.input_model in self._by_model:
            raise ValueError(f"action {spec.name} (or its input model) is registered twice")
        self._by_name[spec.name] = spec
        self._by_model[spec.input_model] = spec

    def spec(self, name: str) -> SpecT:
        """The action called ``name`` (``KeyError`` if there is none)."""
        return self._by_name[name]

    def for_input(self, model: type[BaseModel]) -> SpecT | None:
        """The action that takes input model ``model``, if any."""
        return self._by_model.get(model)

    def names(self) -> tuple[str, ...]:
        """Every action's name, in registration order."""
        return tuple(self._by_name)

    def all_actions(self) -> frozenset[str]:
        """Every registered action (the owner's grant holds them all)."""
        return frozenset(self._by_name)

    def owner_only_actions(self) -> frozenset[str]:
        """The actions never granted to an agent."""
        return frozenset(n for n, s in self._by_name.items() if s.owner_only)

    def agent_actions(self) -> frozenset[str]:
        """What an agent grant holds by default: never an owner-only action."""
        return frozenset(n for n, s in self._by_name.items() if s.for_agents and not s.owner_only)

    def __getitem__(self, name: str) -> SpecT:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


ACTIONS: ActionRegistry[Any] = ActionRegistry()
"""The one registry of the process. ``dispatcher.REGISTRY`` is this same object, typed
with the dispatcher's ``ActionSpec`` (which this module cannot import)."""
