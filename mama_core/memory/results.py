"""What the read actions return: one pydantic model per read, which is also its tool's
output schema (``Catalog.output_schema``, the MCP server's ``outputSchema``).

A handler builds its model; ``to_wire()`` is the dict agents, MCP clients and the
CLI's ``--json`` see, exactly the dict the handler used to build (the same keys in
the same order). A field a result carries only sometimes has a default and is left
out of the wire form unless the handler set it (``exclude_unset``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue

from mama_core.json_types import JsonObject
from mama_core.memory.owner_settings import BriefSettings


class ActionResult(BaseModel):
    """Base of every read's result (and of the rows inside one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_wire(self) -> JsonObject:
        """The result as agents, MCP clients and ``--json`` see it (a fresh dict)."""
        return self.model_dump(mode="json", exclude_unset=True)


class Actor(ActionResult):
    """Who wrote an event, as a listing shows it."""

    kind: str | None
    name: str | None
    turn: str | None


class TombstoneEntry(ActionResult):
    """One tombstone: what it blocks, who made it, whether it was lifted."""

    id: int
    judgment_id: int | None
    kind: str | None
    status: str | None
    text: str | None
    """The blocked text; None once purged (``text_erased``)."""
    text_erased: bool
    scopes: list[str]
    reason: str
    created_at: str
    created_by: Actor
    made_by_action: str | None
    lifted: bool
    lifted_at: str | None
    lifted_by: Actor | None
    lift_reason: str | None


class TombstoneListResult(ActionResult):
    """tombstone.list: newest first."""

    tombstones: list[TombstoneEntry]


class CommitmentEntry(ActionResult):
    """One commitment as listed: who owes what to whom by when."""

    id: int
    status: str
    state: str
    owed_by: str
    owed_to: str
    summary: str
    due_at: str | None
    due_tz: str | None
    overdue: bool
    source_observations: list[int]
    scopes: list[str]
    recorded_at: str


class CommitmentListResult(ActionResult):
    """commitment.list: by due time (none last), then id."""

    commitments: list[CommitmentEntry]


class CheckpointEntry(ActionResult):
    """One checkpoint: where a piece of work stood."""

    id: int
    scope: str
    summary: str
    state: JsonValue
    created_at: str
    provenance: dict[str, JsonValue]


class CheckpointListResult(ActionResult):
    """checkpoint.list: newest first."""

    checkpoints: list[CheckpointEntry]
    count: int


class CommitmentTermsView(ActionResult):
    """A commitment record's terms as readers see them: who owes whom by when, and
    whether it is open, done or dropped."""

    owed_by: str
    owed_to: str
    due_at: str | None
    due_tz: str | None
    state: str
    source_observations: list[int]


class EvidenceItem(ActionResult):
    """A cited observation as a reviewer sees it: ref, where, who, when and an excerpt.
    One the reader cannot see carries only ``ref`` and ``visible`` (False)."""

    ref: str
    visible: bool
    source: str | None = None
    channel: str | None = None
    author: str | None = None
    at: str | None = None
    excerpt: str | None = None
    """``(erased by the owner)`` once purged."""


class PendingChange(ActionResult):
    """A change waiting for the owner's review. An agent sees only that one waits (id,
    action, state); the owner sees what it would do, who proposed it and when."""

    id: int
    action: str
    state: str
    judgment_id: int | None = None
    setting: str | None = None
    """The owner setting it would change (a settings change), else None."""
    input: dict[str, JsonValue] | None = None
    proposed_by: dict[str, JsonValue] | None = None
    created_at: str | None = None
    description: str | None = None


class JudgmentSummary(ActionResult):
    """A judgment as a search result, a history entry or a timeline record."""

    id: int
    kind: str
    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: list[str]
    confidence: float | None
    status: str
    scopes: list[str]
    """The scopes the reader may see named."""
    valid_from: str
    valid_until: str | None
    recorded_at: str
    involvement: str
    origin: str
    """Where it came from, in words (``provenance.origin_line``)."""


class TimelineRecord(JudgmentSummary):
    """A judgment as the timeline saw it at the asked instant."""

    status_then: str
    valid_until_then: str | None
    held_at_valid_at: bool | None
    held_in_range: bool | None = None
    """Only when a range was asked."""
    changed_in_range: bool | None = None
    """Only when a range was asked."""


class TimelineResult(ActionResult):
    """memory.timeline: the records and the events that made them what they were."""

    as_recorded_at: str | None
    valid_at: str | None
    from_time: str | None
    to_time: str | None
    records: list[TimelineRecord]
    events: list[dict[str, JsonValue]]
    """The events as the reader may see them (``event_view``)."""


class Restated(ActionResult):
    """The live record a judgment's save said again."""

    id: int
    summary: str


class MemoryRecord(JudgmentSummary):
    """memory.read's record: the summary, provenance, and what may be done with it."""

    superseded_by: int | None
    """Its successor, when the reader may see it."""
    outcome: str | None
    provenance: dict[str, JsonValue]
    command_id: str
    content_hash: str
    restates: Restated | None = None
    """Only when its save matched a live record the reader may see."""
    pending_change: PendingChange | None
    """A change waiting for the owner's review (an agent sees only that one waits)."""
    allowed: list[str]
    """The verbs this reader may apply now (``verbs.allowed``)."""
    evidence: list[EvidenceItem]
    """The cited observations as the reader may see them."""
    commitment: CommitmentTermsView | None = None
    """A commitment's terms (only on a commitment's records)."""


class HistoryEntry(JudgmentSummary):
    """A predecessor a record replaced (or, as a proposal, would replace)."""

    relation: str
    """``replaced`` or ``proposed_replacement``."""
    replaced_by: int
    commitment: CommitmentTermsView | None = None
    """A commitment's terms at this step (only on a commitment's records)."""


class MemoryReadResult(ActionResult):
    """memory.read: one record, its predecessors nearest first, the events that touched it."""

    record: MemoryRecord
    history: list[HistoryEntry]
    events: list[dict[str, JsonValue]]


class SaidAs(ActionResult):
    """Another record that says the same thing as a search result."""

    id: int
    summary: str


class SearchHit(ActionResult):
    """One memory.search result. A ranked search (with words) gives ``label``, ``score``
    and ``found_by`` and no ``confidence``; a listing (no words) gives ``confidence``
    and no ranking fields. Fields a hit does not carry are left out of the wire."""

    id: int
    kind: str
    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: list[str]
    confidence: float | None = None
    """Only in a listing without words."""
    status: str
    scopes: list[str]
    valid_from: str
    valid_until: str | None
    recorded_at: str
    involvement: str
    origin: str
    label: str | None = None
    """``match``, or how a replaced record was reached (ranked search only)."""
    score: float | None = None
    """The fused rank score (ranked search only)."""
    found_by: list[str] | None = None
    """Which arms found it: words, meaning (ranked search only)."""
    replaced_by: int | None = None
    """Only on a replaced record reached through history."""
    also_said_as: list[SaidAs] | None = None
    """Only when other records in the top-k say the same thing."""
    commitment: CommitmentTermsView | None = None
    """Only on a commitment: its terms."""
    allowed: list[str]
    """The verbs this reader may apply now (``verbs.allowed``)."""


class SearchResult(ActionResult):
    """memory.search: at most ``limit`` results (groups of restatements count once)."""

    results: list[SearchHit]
    count: int


class Observation(ActionResult):
    """One kept observation (a purged one has empty text), with its facets."""

    id: int
    source: str
    external_id: str
    author: str
    text: str
    received_at: str
    purged_at: str | None
    purged: bool
    channel: str | None = None
    scope: str | None = None
    """A connector item's scope; None for the owner's messages and MAMA's replies."""
    metadata: dict[str, JsonValue] | None = None


class QuotingObservation(Observation):
    """An observation that quotes judgments: which ones, and why it counts as quoting."""

    quotes: list[int]
    """The judgment ids it quotes."""
    why: list[str]
    """``source``, ``reply``, ``text`` or ``words`` (``memory.quotes``)."""


class QuotesResult(ActionResult):
    """memory.quotes: the unpurged observations quoting a judgment (or its chain), oldest first."""

    id: int
    observations: list[QuotingObservation]


class OwnerSettingsResult(ActionResult):
    """owner.settings: the owner's timezone (None: not set) and daily brief; for the
    owner, also the settings changes waiting for the owner's word."""

    timezone: str | None
    brief: BriefSettings
    pending_changes: list[PendingChange] | None = None
    """Only when the owner (or the owner's turn) reads it."""


class ObservationListResult(ActionResult):
    """observation.list: newest first."""

    observations: list[Observation]


class ObservationReadResult(ActionResult):
    """observation.read: one observation."""

    observation: Observation


class GuidanceChange(ActionResult):
    """One guidance change: ``retired`` (with its status), ``revised`` (with the ids it
    replaces) or ``added``; the fields a kind of change does not carry stay out."""

    change: str
    id: int
    kind: str
    status: str | None = None
    """Only on ``retired``."""
    topic: str | None = None
    """Not on ``retired``."""
    summary: str
    applies_when: str | None = None
    """Not on ``retired``."""
    steps: list[str] | None = None
    """Not on ``retired``."""
    replaces: list[int] | None = None
    """Only on ``revised``."""


class GuidanceChangesResult(ActionResult):
    """guidance.changes: one page of the changes between two event ids."""

    since: int
    until: int
    total: int
    offset: int
    changes: list[GuidanceChange]
    more: bool


class ObservationCount(ActionResult):
    """How many kept connector items one source and channel has after an id."""

    source: str
    channel: str
    count: int
    last_id: int


class ObservationCountsResult(ActionResult):
    """observation.counts: per source and channel, and the newest id the reader may see."""

    counts: list[ObservationCount]
    newest_id: int | None


class PersonListing(ActionResult):
    """Someone the reader may know of, with how much names them."""

    name: str
    aliases: list[str]
    joined_by_owner: bool
    memories: int
    commitments: int
    """Open commitments."""
    messages: int
    meetings: int


class PersonName(ActionResult):
    """Who a person is: the name they are called by and every name they go by."""

    name: str
    aliases: list[str]
    joined_by_owner: bool


class PersonMemory(ActionResult):
    """A memory that names a person."""

    id: int
    kind: str
    status: str
    summary: str
    recorded_at: str
    scopes: list[str]
    involvement: str


class PersonCommitments(ActionResult):
    """Open commitments a person owes and is owed (as ``commitment.list`` lists them)."""

    owed_by: list[CommitmentEntry]
    owed_to: list[CommitmentEntry]


class PersonMessage(ActionResult):
    """One of a person's latest connector items."""

    id: int
    source: str
    channel: str
    scope: str
    author: str
    text: str
    received_at: str
    external_id: str


class Meeting(ActionResult):
    """A calendar event a person attends."""

    observation_id: int
    source: str
    external_id: str
    title: str
    start: str
    end: str | None
    all_day: bool
    status: str
    scope: str


class PersonMeetings(ActionResult):
    """Meetings with a person: upcoming (soonest first), then recent (latest first)."""

    upcoming: list[Meeting]
    recent: list[Meeting]


class PersonAboutResult(ActionResult):
    """person.about: who they are, the memories that name them (at most ``limit``, of
    ``memories_total``), open commitments, latest messages per source, meetings."""

    person: PersonName
    memories: list[PersonMemory]
    memories_total: int
    commitments: PersonCommitments
    messages: list[PersonMessage]
    meetings: PersonMeetings


class PersonListResult(ActionResult):
    """person.list: the most talked-about first."""

    people: list[PersonListing]
