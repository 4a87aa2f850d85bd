"""What a caller asks recall for, and what it gets back."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Literal

from mama_core.recall.predicate import Predicate

MAX_LIMIT = 1000


@dataclass(frozen=True)
class RecallQuery:
    """One recall request.

    ``scopes`` are the scope names the caller may read, given explicitly by the
    host (for the owner: every scope). An empty collection returns nothing; None
    is refused, so no caller can mean "everything" by forgetting the argument.
    ``kinds`` None means every kind. ``statuses`` defaults to beliefs only.
    ``valid_at`` asks what held in the world at that time. ``include_history``
    adds the judgments each hit replaced, labelled ``replaced``.
    """

    text: str
    scopes: Collection[str]
    kinds: Collection[str] | None = None
    statuses: Collection[str] = ("active",)
    valid_at: datetime | str | None = None
    limit: int = 10
    include_history: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("text must be a string")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        # Validates names and refuses scopes=None now, not at search time.
        self.predicate()

    def predicate(self) -> Predicate:
        """The read predicate this query implies."""
        return Predicate.build(self.scopes, self.statuses, self.kinds, self.valid_at)


@dataclass(frozen=True)
class ArmScore:
    """How one arm ranked a hit: its rank (from 1) and the arm's own score.

    bm25 and trigram scores are FTS5's ``-bm25()`` (higher is better); vector
    scores are cosine similarities.
    """

    rank: int
    score: float


Label = Literal["match", "replaced"]


@dataclass(frozen=True)
class Row:
    """The stored fields of one judgment, as recall shows them (``rows.fetch_rows``).

    Not ``model.Judgment``: recall reads only what it shows, with the record's scope
    names, and leaves out what only a full read needs (provenance, confidence,
    outcome, command id, content hash)."""

    id: int
    kind: str
    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: tuple[str, ...]
    status: str
    valid_from: str
    valid_until: str | None
    recorded_at: str
    superseded_by: int | None
    involvement: str
    scopes: tuple[str, ...]

    def hit(
        self,
        score: float,
        arms: Mapping[str, ArmScore],
        label: Label = "match",
        replaced_by: int | None = None,
    ) -> RecallHit:
        """This row as a hit recall returns, with why it was returned."""
        stored = {name: getattr(self, name) for name in _ROW_FIELDS}
        return RecallHit(
            **stored, score=score, arms=dict(arms), label=label, replaced_by=replaced_by
        )


_ROW_FIELDS = tuple(f.name for f in fields(Row))


@dataclass(frozen=True)
class RecallHit(Row):
    """One judgment recall returns (its ``Row``), with the reason it was returned.

    ``label`` is ``match`` for a ranked result and ``replaced`` for a predecessor
    added by ``include_history`` (then ``replaced_by`` names the judgment that
    replaced it, ``score`` is 0 and ``arms`` is empty).
    """

    score: float
    arms: Mapping[str, ArmScore]
    label: Label = "match"
    replaced_by: int | None = None
    extra: Mapping[str, object] = field(default_factory=dict[str, object])

    @property
    def found_by(self) -> tuple[str, ...]:
        """The arms that found this hit, best rank first."""
        return tuple(sorted(self.arms, key=lambda a: (self.arms[a].rank, a)))
