"""The action catalog: every registered verb, its input schema and who may use it.

Each verb registers itself where its handler lives (``mama_core.memory.actions``,
with ``dispatcher.mutation`` / ``dispatcher.query``); importing that package
fills the registry, and the catalog is its read-only view. Front ends (MCP server,
agent backends, CLI, review window) build their tool lists from here, so a verb's
name, description and JSON schema are defined once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import mama_core.memory.actions  # noqa: F401  # pyright: ignore[reportUnusedImport]  (registers every verb)
from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import REGISTRY, ActionSpec

OWNER_ONLY_ACTIONS: frozenset[str] = REGISTRY.owner_only_actions()
AGENT_ACTIONS: frozenset[str] = REGISTRY.agent_actions()
"""What an agent grant holds by default: never an owner-only verb."""
ALL_ACTIONS: frozenset[str] = REGISTRY.all_actions()


class Catalog:
    """The actions by name, with their JSON schemas."""

    def __init__(self, specs: Iterable[ActionSpec[Any]] | None = None) -> None:
        chosen = REGISTRY.values() if specs is None else specs
        self.actions: Mapping[str, ActionSpec[Any]] = MappingProxyType({s.name: s for s in chosen})
        self._schemas: dict[str, JsonObject] = {}
        self._output_schemas: dict[str, JsonObject] = {}

    def json_schema(self, name: str) -> JsonObject:
        """The JSON schema of an action's input, as shown to MCP clients and agents (a
        copy the caller may change)."""
        # Made once per action: pydantic builds a schema in about a millisecond, and every
        # agent turn asks for the whole catalog's on the app's loop (~23 ms a turn).
        schema = self._schemas.get(name)
        if schema is None:
            schema = self._schemas[name] = self.actions[name].input_model.model_json_schema()
        return copy.deepcopy(schema)

    def output_schema(self, name: str) -> JsonObject | None:
        """The JSON schema of a read's result (its result model's), or None for a
        mutation or a read without one (a copy the caller may change)."""
        model = self.actions[name].result_model
        if model is None:
            return None
        schema = self._output_schemas.get(name)
        if schema is None:
            schema = self._output_schemas[name] = model.model_json_schema(mode="serialization")
        return copy.deepcopy(schema)

    def __contains__(self, name: object) -> bool:
        return name in self.actions


CATALOG = Catalog()
