"""The action catalog: every verb the engine offers, its input schema and who may use it.

Front ends (MCP server, agent backends, CLI, review window) build their tool
lists from here, so a verb's name, description and JSON schema are defined once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from mama_core.memory import inputs


@dataclass(frozen=True)
class ActionSpec:
    """One action: its input model and whether it is owner-only or mutating."""

    name: str
    input_model: type[BaseModel]
    owner_only: bool
    mutates: bool
    description: str
    scan_secrets: bool = True
    """Mutations whose strings are refused when secret-shaped (all but raw observations)."""


_SPECS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "memory.save",
        inputs.SaveInput,
        owner_only=False,
        mutates=True,
        description="Save a judgment (decision, fact, preference, constraint, lesson, workflow, "
        "task, schedule). Guidance you save is proposed for the owner's review.",
    ),
    ActionSpec(
        "memory.search",
        inputs.SearchInput,
        owner_only=False,
        mutates=False,
        description="Search believed (active) judgments in your scopes by words.",
    ),
    ActionSpec(
        "memory.read",
        inputs.ReadInput,
        owner_only=False,
        mutates=False,
        description="Read one judgment with its provenance, replaced predecessors and events.",
    ),
    ActionSpec(
        "memory.retire",
        inputs.RetireInput,
        owner_only=False,
        mutates=True,
        description="Stop believing a judgment (stale, superseded or contradicted), with a reason. "
        "On the owner's records this only proposes it; the owner approves or rejects.",
    ),
    ActionSpec(
        "memory.update_outcome",
        inputs.UpdateOutcomeInput,
        owner_only=False,
        mutates=True,
        description="Record how a judgment turned out; it stays what it was. On the owner's "
        "records this is proposed to the owner (refused in turns the owner did not start).",
    ),
    ActionSpec(
        "memory.link",
        inputs.LinkInput,
        owner_only=False,
        mutates=True,
        description="Relate two judgments (refines, contradicts, builds_on, ...). Touching the "
        "owner's records this is proposed to the owner (refused in turns the owner did not "
        "start).",
    ),
    ActionSpec(
        "memory.timeline",
        inputs.TimelineInput,
        owner_only=False,
        mutates=False,
        description="What the store believed at a past time and why it changed, or what held "
        "in the world at a time.",
    ),
    ActionSpec(
        "checkpoint.save",
        inputs.CheckpointSaveInput,
        owner_only=False,
        mutates=True,
        description="Save where a piece of work stands, to resume it later.",
    ),
    ActionSpec(
        "checkpoint.list",
        inputs.CheckpointListInput,
        owner_only=False,
        mutates=False,
        description="List recent checkpoints, newest first.",
    ),
    ActionSpec(
        "review.approve",
        inputs.ApproveInput,
        owner_only=True,
        mutates=True,
        description="Approve a proposed judgment (it becomes active), or apply the change "
        "proposed to one of the owner's records as the owner's own.",
    ),
    ActionSpec(
        "review.reject",
        inputs.RejectInput,
        owner_only=True,
        mutates=True,
        description="Reject a proposed judgment, or the change proposed to a record, keeping "
        "the reason.",
    ),
    ActionSpec(
        "memory.purge",
        inputs.PurgeInput,
        owner_only=True,
        mutates=True,
        description="Erase the text of a judgment and/or observations; the fact of it stays.",
    ),
    ActionSpec(
        "observation.list",
        inputs.ObservationListInput,
        owner_only=True,
        mutates=False,
        description="List kept observations (messages, replies, items), newest first.",
    ),
    ActionSpec(
        "observation.read",
        inputs.ObservationReadInput,
        owner_only=True,
        mutates=False,
        description="Read one observation with its text.",
    ),
    ActionSpec(
        "memory.quotes",
        inputs.QuotesInput,
        owner_only=True,
        mutates=False,
        description="The observations (messages) that quote a judgment, to purge with it.",
    ),
    ActionSpec(
        "memory.tombstone",
        inputs.TombstoneInput,
        owner_only=True,
        mutates=True,
        description="Forbid a judgment's text from being saved again.",
    ),
    ActionSpec(
        "tombstone.lift",
        inputs.LiftInput,
        owner_only=True,
        mutates=True,
        description="Lift a tombstone so the text may be saved again.",
    ),
    ActionSpec(
        "tombstone.list",
        inputs.TombstoneListInput,
        owner_only=True,
        mutates=False,
        description="List tombstones: what each blocks, who made it, whether it was lifted.",
    ),
    ActionSpec(
        "observation.record",
        inputs.ObservationInput,
        owner_only=False,
        mutates=True,
        description="Keep a raw input (message, mail, card) exactly as it arrived.",
        scan_secrets=False,
    ),
)

OWNER_ONLY_ACTIONS: frozenset[str] = frozenset(s.name for s in _SPECS if s.owner_only)
AGENT_ACTIONS: frozenset[str] = frozenset(
    {
        "memory.save",
        "memory.search",
        "memory.read",
        "memory.retire",
        "memory.update_outcome",
        "memory.link",
        "memory.timeline",
        "checkpoint.save",
        "checkpoint.list",
    }
)
"""What an agent grant holds by default: never an owner-only verb."""
ALL_ACTIONS: frozenset[str] = frozenset(s.name for s in _SPECS)


class Catalog:
    """The actions by name, with their JSON schemas."""

    def __init__(self, specs: tuple[ActionSpec, ...] = _SPECS) -> None:
        self.actions: Mapping[str, ActionSpec] = MappingProxyType({s.name: s for s in specs})

    def json_schema(self, name: str) -> dict[str, Any]:
        """The JSON schema of an action's input, as shown to MCP clients and agents."""
        spec = self.actions[name]
        return spec.input_model.model_json_schema()

    def __contains__(self, name: object) -> bool:
        return name in self.actions


CATALOG = Catalog()
