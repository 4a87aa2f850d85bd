"""The input model of every action: what MCP clients and agents see as its schema.

Each model forbids extra fields, so a caller cannot slip in ``provenance``,
``involvement`` or ``status``: those are the host's to stamp. Descriptions are
short and true because they are shown to models as tool documentation.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from mama_core import clock
from mama_core.ids import MAX_ID
from mama_core.invisible import has_visible_char
from mama_core.model import GUIDANCE_KINDS, EdgeKind, Kind, RetireStatus, Status
from mama_core.scopes.names import ScopeName


def _utc(moment: datetime) -> datetime:
    try:
        return clock.to_utc(moment)
    except OverflowError as exc:
        raise ValueError("the time is out of range") from exc


Moment = Annotated[datetime, AfterValidator(_utc)]
"""An instant; a naive one is taken as UTC."""


def _visible(text: str) -> str:
    if not has_visible_char(text):
        raise ValueError("the text holds no visible character (only spaces or invisible marks)")
    return text


Text = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=4000),
    AfterValidator(_visible),
]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]
LongText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=20000)]
Reason = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=2000),
    AfterValidator(_visible),
]
Step = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
    AfterValidator(_visible),
]
StoreId = Annotated[int, Field(ge=1, le=MAX_ID)]
"""A row id of any kind (judgment, observation, tombstone): 1 to ``MAX_ID``; a bigger
one is ``invalid_input``, never an overflow inside the driver."""
RecordId = Annotated[StoreId, Field(description="A judgment id.")]
CommandId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$"),
    Field(description="Idempotency key: resending the same command returns the first receipt."),
]


class ActionInput(BaseModel):
    """Base of all action inputs: unknown fields are errors.

    ``defer_build``: pydantic builds a model's validator when it first validates (or gives
    its JSON schema), not when the class is defined; a ``mama`` command uses one or two of
    these models, and building all of them cost every command about a tenth of a second."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class MutationInput(ActionInput):
    """Base of inputs that change the store: they may carry an idempotency key."""

    command_id: CommandId | None = None


OWNER_PARTY = "owner"
"""How a commitment names the owner as the one who owes, or is owed."""


def _party(name: str) -> str:
    return OWNER_PARTY if name.casefold() == OWNER_PARTY else name


Party = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=200),
    AfterValidator(_party),
]
"""``owner`` (any case) or a person's name."""

Due = Annotated[
    AwareDatetime,
    Field(description="When it is due, with its timezone (e.g. 2026-12-05T17:00:00+01:00)."),
]
"""A due time: an aware datetime; a naive one is refused (whose 17:00 would it be?)."""


class CommitmentTerms(ActionInput):
    """The terms of a commitment saved with memory.save (kind ``commitment``)."""

    owed_by: Party = Field(
        OWNER_PARTY, min_length=1, description="Who owes it: 'owner' or a person's name."
    )
    owed_to: Party = Field("", description="To whom: 'owner', a person's name, or empty.")
    due: Due | None = None
    source_observations: list[StoreId] = Field(
        default_factory=list[int],
        max_length=50,
        description="Ids of the observations it was found in (obs:12 -> 12).",
    )

    @model_validator(mode="after")
    def _distinct_sources(self) -> CommitmentTerms:
        if len(set(self.source_observations)) != len(self.source_observations):
            raise ValueError("source_observations lists an id twice")
        return self


def _observation_ref(value: object) -> object:
    """``12`` or ``"12"`` as ``"obs:12"``: the refs are shown to agents as ``obs:N``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"obs:{value}"
    if isinstance(value, str) and value.strip().isdigit():
        return f"obs:{value.strip()}"
    return value.strip() if isinstance(value, str) else value


ObservationRef = Annotated[
    str,
    StringConstraints(pattern=r"^obs:[1-9][0-9]{0,17}$"),
    AfterValidator(lambda v: v if int(v[4:]) <= MAX_ID else _too_big(v)),
    BeforeValidator(_observation_ref),
]
"""An observation's ref as items show it: ``obs:12``."""


def _too_big(value: str) -> str:
    raise ValueError(f"{value} is not an observation id")


class SaveInput(MutationInput):
    """memory.save: record a judgment (or revise others with ``replaces``)."""

    kind: Kind = Field(description="What it is; preference/constraint/lesson/workflow steer you.")
    topic: ShortText = Field("", description="A few words naming the subject.")
    summary: Text = Field(description="The judgment itself, in one or two sentences.")
    details: LongText = Field("", description="Supporting detail, reasons, examples.")
    applies_when: ShortText | None = Field(
        None, description="When this applies; required for guidance kinds."
    )
    steps: list[Step] = Field(
        default_factory=list, max_length=100, description="Ordered steps; a workflow needs one."
    )
    confidence: float | None = Field(None, ge=0, le=1, description="How sure, 0 to 1.")
    scopes: list[ScopeName] | None = Field(
        None, max_length=20, description="Where it belongs; defaults to your default scope."
    )
    valid_from: Moment | None = Field(
        None, description="When it started to hold in the world (ISO 8601); default now."
    )
    replaces: list[RecordId] = Field(
        default_factory=list[int],
        max_length=50,
        description="Ids of judgments this one supersedes.",
    )
    commitment: CommitmentTerms | None = Field(
        None, description="For kind commitment: who owes it to whom, by when, found where."
    )
    propose: bool = Field(
        False,
        description="Save it proposed, for the owner's review, even where it would land "
        "active (you are guessing, e.g. a pattern found it and no one read it).",
    )
    evidence: list[ObservationRef] = Field(
        default_factory=list[str],
        max_length=50,
        description="The items it rests on, as their refs (obs:12); shown to the owner.",
    )
    even_if_duplicate: bool = Field(
        False,
        description=(
            "Owner only: save it as its own memory even though a live memory in the same "
            "scopes already says the same (otherwise the save is answered with that memory)."
        ),
    )

    @model_validator(mode="after")
    def _guidance_shape(self) -> SaveInput:
        if self.commitment is not None and self.kind is not Kind.COMMITMENT:
            raise ValueError("commitment terms belong to kind commitment only")
        if self.kind in GUIDANCE_KINDS and not self.applies_when:
            raise ValueError(f"a {self.kind.value} needs applies_when (when does it apply?)")
        if self.kind is Kind.WORKFLOW and not self.steps:
            raise ValueError("a workflow needs at least one step")
        if len(set(self.replaces)) != len(self.replaces):
            raise ValueError("replaces lists an id twice")
        if len(set(self.evidence)) != len(self.evidence):
            raise ValueError("evidence lists an item twice")
        return self

    def evidence_ids(self) -> list[int]:
        """Every observation it cites: ``evidence`` and a commitment's sources, once each."""
        cited = [int(r[4:]) for r in self.evidence]
        if self.commitment is not None:
            cited += self.commitment.source_observations
        return list(dict.fromkeys(cited))


class SearchInput(ActionInput):
    """memory.search: find believed judgments by words."""

    query: Annotated[str, StringConstraints(max_length=1000)] = Field(
        "", description="Words to look for; empty lists the newest."
    )
    scopes: list[ScopeName] | None = Field(
        None, max_length=20, description="Only these scopes (each must be yours)."
    )
    kinds: list[Kind] | None = Field(None, description="Only these kinds.")
    statuses: list[Status] | None = Field(
        None, description="Owner only: statuses to include (default: active)."
    )
    limit: int = Field(20, ge=1, le=200, description="At most this many results.")
    include_history: bool = Field(
        False, description="Also list what each result replaced, labelled replaced."
    )


class ReadInput(ActionInput):
    """memory.read: one judgment with its provenance, history and events."""

    id: RecordId


class RetireInput(MutationInput):
    """memory.retire: stop believing a judgment, with a reason."""

    id: RecordId
    reason: Reason = Field(description="Why it no longer holds.")
    status: RetireStatus = Field(
        RetireStatus.STALE, description="stale, superseded or contradicted."
    )
    by: RecordId | None = Field(None, description="The judgment that supersedes or contradicts it.")
    forbid_resave: bool = Field(False, description="Refuse saving it again (a tombstone).")

    @model_validator(mode="after")
    def _successor(self) -> RetireInput:
        if self.status is RetireStatus.SUPERSEDED and self.by is None:
            raise ValueError("status superseded needs 'by' (the successor's id)")
        if self.by is not None and self.status is RetireStatus.STALE:
            raise ValueError("'by' only goes with superseded or contradicted")
        if self.by == self.id:
            raise ValueError("a judgment cannot replace itself")
        return self


class UpdateOutcomeInput(MutationInput):
    """memory.update_outcome: record how a decision or task turned out."""

    id: RecordId
    outcome: Text = Field(description="What happened.")
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)] | None = (
        Field(None, description="Why this is recorded now.")
    )


class LinkInput(MutationInput):
    """memory.link: relate two judgments."""

    src: RecordId = Field(description="The judgment the edge starts from.")
    dst: RecordId = Field(description="The judgment it points to.")
    kind: EdgeKind = Field(description="How src relates to dst.")
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)] | None = None

    @model_validator(mode="after")
    def _distinct(self) -> LinkInput:
        if self.src == self.dst:
            raise ValueError("src and dst must differ")
        return self


class GuidanceChangesInput(ActionInput):
    """guidance.changes: every guidance change between two event ids (a delta's whole)."""

    since: Annotated[int, Field(ge=0, le=MAX_ID)] = Field(
        description="Changes after this event id (the delta's 'since')."
    )
    until: StoreId | None = Field(None, description="Up to this event id (the delta's 'until').")
    offset: int = Field(0, ge=0, le=MAX_ID, description="Skip this many changes (paging).")
    limit: int = Field(100, ge=1, le=500, description="At most this many changes.")


class TimelineInput(ActionInput):
    """memory.timeline: what the store believed at a time, and what held in the world."""

    id: RecordId | None = Field(None, description="Only this judgment.")
    scopes: list[ScopeName] | None = Field(None, max_length=20, description="Only these scopes.")
    kinds: list[Kind] | None = Field(None, description="Only these kinds.")
    as_recorded_at: Moment | None = Field(
        None, description="Store time: what was active as recorded at this instant."
    )
    valid_at: Moment | None = Field(None, description="World time: what held at this instant.")
    from_time: Moment | None = Field(
        None, description="With to_time: what held, or changed, between the two instants."
    )
    to_time: Moment | None = Field(
        None, description="With from_time: the end of the range (exclusive)."
    )
    limit: int = Field(50, ge=1, le=500, description="At most this many records.")

    @model_validator(mode="after")
    def _one_world_question(self) -> TimelineInput:
        if (self.from_time is None) != (self.to_time is None):
            raise ValueError("from_time and to_time go together: give both, or neither")
        if self.from_time is not None and self.to_time is not None:
            if self.valid_at is not None:
                raise ValueError("ask valid_at or a from_time/to_time range, not both")
            if self.from_time >= self.to_time:
                raise ValueError("from_time must be before to_time")
        return self


class CheckpointSaveInput(MutationInput):
    """checkpoint.save: where a piece of work stands, to resume later."""

    summary: Text = Field(description="Where things stand.")
    state: dict[str, Any] = Field(
        default_factory=dict, description="Open threads, next steps, files (JSON)."
    )
    scope: ScopeName | None = Field(None, description="Defaults to your default scope.")

    @model_validator(mode="after")
    def _json_state(self) -> CheckpointSaveInput:
        try:
            encoded = json.dumps(self.state, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError("state must be plain JSON (objects, lists, strings, numbers)") from exc
        if len(encoded) > 100_000:
            raise ValueError("state is larger than 100 kB")
        return self


class CheckpointListInput(ActionInput):
    """checkpoint.list: recent checkpoints, newest first."""

    scope: ScopeName | None = Field(None, description="Only this scope.")
    limit: int = Field(10, ge=1, le=200)


ChangeId = Annotated[
    int,
    Field(ge=1, description="Only this proposed change (as shown on its review card)."),
]


class _Decision(MutationInput):
    """What an owner's decision names: a record (its proposal, or the change proposed to
    it), or with ``change_id`` alone a change proposed to the owner's settings."""

    id: RecordId | None = Field(
        None, description="The proposed judgment, or the record a change was proposed to."
    )
    change_id: ChangeId | None = None

    @model_validator(mode="after")
    def _names_something(self) -> _Decision:
        if self.id is None and self.change_id is None:
            raise ValueError(
                "give the record's id, or change_id for a change proposed to your settings"
            )
        return self


class ApproveInput(_Decision):
    """review.approve (owner): make a proposal active, or apply the change proposed to it."""

    reason: Reason | None = Field(None, description="Why (kept beside the approval's event).")


class RejectInput(_Decision):
    """review.reject (owner): decline a proposal (or the change proposed to it)."""

    reason: Reason
    forbid_resave: bool = Field(False, description="Refuse saving it again (a tombstone).")


class RestoreInput(MutationInput):
    """memory.restore (owner): take back a reject, an approve or a retire by appending a
    copy of the record (its words, scopes and provenance) in the state it had before."""

    id: RecordId = Field(description="The rejected, approved or retired judgment.")
    reason: Reason = Field(description="Why it is restored.")


ObservationId = Annotated[StoreId, Field(description="An observation (message) id.")]


class PurgeInput(MutationInput):
    """memory.purge (owner): erase the text of a judgment and/or of observations.

    With ``id`` and ``observation_ids`` together (e.g. the messages that quote
    the judgment, see ``memory.quotes``), all are erased in one transaction.
    """

    id: RecordId | None = None
    observation_id: ObservationId | None = None
    observation_ids: list[ObservationId] = Field(
        default_factory=list[int],
        max_length=1000,
        description="Observations (messages) whose text to erase too.",
    )
    include_chain: bool = Field(False, description="Also purge the judgments it replaced.")
    reason: Reason

    @model_validator(mode="after")
    def _one_target(self) -> PurgeInput:
        if self.id is None and self.observation_id is None and not self.observation_ids:
            raise ValueError("give id, observation_id or observation_ids")
        if self.id is None and self.include_chain:
            raise ValueError("include_chain applies to judgments only")
        return self

    def all_observation_ids(self) -> list[int]:
        """Every observation to erase, once each, in the order given."""
        given = [] if self.observation_id is None else [self.observation_id]
        return list(dict.fromkeys([*given, *self.observation_ids]))


class ObservationListInput(ActionInput):
    """observation.list: the newest observations first (an agent: only its scopes' items)."""

    limit: int = Field(50, ge=1, le=500)
    before_id: ObservationId | None = Field(None, description="Only ids below this (paging).")
    source: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    include_purged: bool = False


class ObservationCountsInput(ActionInput):
    """observation.counts: connector items per source and channel (an agent: its scopes)."""

    after_id: Annotated[int, Field(ge=0, le=MAX_ID)] = Field(
        0, description="Only items with a larger id (0: all)."
    )


class ObservationReadInput(ActionInput):
    """observation.read: one observation with its text (an agent: only in its scopes)."""

    id: ObservationId


class QuotesInput(ActionInput):
    """memory.quotes (owner): the observations (messages) that quote a judgment."""

    id: RecordId
    include_chain: bool = Field(False, description="Also the judgments it replaced.")


class TombstoneInput(MutationInput):
    """memory.tombstone (owner): forbid a judgment's text from being saved again."""

    id: RecordId
    reason: Reason


class LiftInput(MutationInput):
    """tombstone.lift (owner): allow a tombstoned text again."""

    tombstone_id: StoreId
    reason: Reason


class TombstoneListInput(ActionInput):
    """tombstone.list (owner): every tombstone, what it blocks and who made it."""

    include_lifted: bool = Field(True, description="Also list lifted tombstones.")
    judgment_id: RecordId | None = Field(None, description="Only tombstones made from it.")
    limit: int = Field(200, ge=1, le=1000)


class ObservationInput(MutationInput):
    """observation.record: keep a raw input (message, mail, card) as it arrived."""

    source: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    author: Annotated[str, StringConstraints(max_length=500)] = ""
    text: Annotated[str, StringConstraints(max_length=200000)]
    received_at: Moment | None = None


class CommitmentCloseInput(MutationInput):
    """commitment.close: mark an open commitment done or dropped."""

    id: RecordId
    outcome: Literal["done", "dropped"] = Field(description="done, or dropped (needs a reason).")
    reason: Reason | None = Field(None, description="Why (required to drop).")

    @model_validator(mode="after")
    def _drop_needs_reason(self) -> CommitmentCloseInput:
        if self.outcome == "dropped" and self.reason is None:
            raise ValueError("dropping a commitment needs a reason")
        return self


class CommitmentRescheduleInput(MutationInput):
    """commitment.reschedule: give an open commitment a new due time (or none)."""

    id: RecordId
    due: Due | None = Field(description="The new due time with its timezone, or null for none.")
    reason: Reason | None = Field(None, description="Why it moved.")


class CommitmentListInput(ActionInput):
    """commitment.list: the commitments in your scopes, by due time."""

    include_proposed: bool = Field(True, description="Also those waiting for the owner.")
    state: Literal["open", "done", "dropped"] = Field("open", description="Which ones.")
    limit: int = Field(200, ge=1, le=1000, description="At most this many.")
