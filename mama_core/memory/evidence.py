"""Evidence: the observations (``obs:N``) a saved record says it rests on.

An agent proposing what a source brought in cites the items it found it in. The
host checks each cited item is one the caller may see (the items of a source turn
are in its scopes; anything else is refused ``not_found`` naming the ref), and
stamps the refs in the record's provenance, so every read and review card shows what
the claim rests on. A proposal the owner rejected is not proposed again from the
same items: a new proposal with the same words (or the same meaning, by the
tombstone matcher), resting only on items the rejected one rested on, is refused
``already_rejected`` and never reaches the owner.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from mama_core.errors import AlreadyRejectedError, NotFoundError
from mama_core.json_types import JsonObject
from mama_core.memory.actions.observation_reads import (
    COLUMNS,
    FACET_COLUMNS,
    FACETS_JOIN,
    observation_of,
    visible_clause,
)
from mama_core.memory.results import EvidenceItem
from mama_core.memory.tombstone_match import near_duplicate
from mama_core.memory.tombstones import normalise
from mama_core.scopes.bindings import scope_predicate
from mama_core.scopes.grants import Grant
from mama_core.store.connection import Connection

EVIDENCE_KEY = "evidence"
"""The provenance key holding the refs (``["obs:12", "obs:13"]``)."""
EXCERPT_CHARS = 240


def ref(observation_id: int) -> str:
    return f"obs:{observation_id}"


def ref_id(value: str) -> int:
    """``obs:12`` -> 12."""
    return int(value.removeprefix("obs:"))


def check_evidence(conn: Connection, ids: Sequence[int], grant: Grant) -> None:
    """Refuse the save unless ``grant`` sees every cited observation (one query)."""
    if not ids:
        return
    visible, params = visible_clause(grant)
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT o.id FROM observations o {FACETS_JOIN} WHERE o.id IN ({marks}) AND {visible}",
        (*ids, *params),
    ).fetchall()
    missing = [i for i in ids if i not in {int(r[0]) for r in rows}]
    if missing:
        named = ", ".join(ref(i) for i in missing)
        raise NotFoundError(  # not_found: an item outside the grant looks like none
            f"evidence {named}: not an item of this turn nor an observation in your scopes. "
            "Cite only the obs:N refs shown with the items you were given.",
            details={"fields": ["evidence"], "observations": missing},
        )


def stamp(provenance: JsonObject, ids: Iterable[int]) -> JsonObject:
    """``provenance`` with the cited refs (sorted, once each); unchanged when none."""
    unique = sorted(set(ids))
    if unique:
        provenance[EVIDENCE_KEY] = [ref(i) for i in unique]
    return provenance


def evidence_ids(provenance: Mapping[str, Any]) -> list[int]:
    """The observation ids a record's provenance cites (none: [])."""
    raw: object = provenance.get(EVIDENCE_KEY) or []
    if not isinstance(raw, list):
        return []
    refs = cast(list[object], raw)
    return [ref_id(str(v)) for v in refs]


def refuse_if_rejected(
    conn: Connection,
    scopes: Sequence[str],
    summary: str,
    vector: np.ndarray | None,
    ids: Sequence[int],
    model_id: str | None,
    threshold: float,
    swap_same_meaning: float = 0.0,
) -> None:
    """Raise ``already_rejected`` if the owner rejected a proposal in an overlapping
    scope that says the same (same normalised words, or the tombstone matcher's same
    meaning) and rests on every item this one cites. New items are new support: a
    proposal citing one the rejected record did not may land."""
    if not ids:
        return
    in_scopes, params = scope_predicate("j", scopes)
    rows = conn.execute(
        "SELECT j.id, j.summary, j.provenance, v.vector FROM judgments j "
        "LEFT JOIN embeddings v ON v.judgment_id = j.id AND v.model_id = ? "
        "WHERE j.status = 'rejected' AND EXISTS (SELECT 1 FROM "
        "json_each(j.provenance, '$.evidence') e WHERE e.value IN "
        f"(SELECT value FROM json_each(?))) AND {in_scopes} ORDER BY j.id DESC",
        (model_id, json.dumps([ref(i) for i in ids]), *params),
    ).fetchall()
    cited = set(ids)
    words = normalise(summary)
    for row in rows:
        if not cited <= set(evidence_ids(json.loads(str(row[2])))):
            continue
        same = normalise(str(row[1])) == words
        if not same and vector is not None and row[3] is not None:
            stored = np.frombuffer(row[3], dtype="<f4")
            if stored.shape == vector.shape:
                similarity = float(np.dot(stored, vector))
                same = near_duplicate(
                    str(row[1]), summary, similarity, threshold, swap_same_meaning
                )
        if same:
            raise AlreadyRejectedError(
                f"Already rejected by the owner: #{row[0]} said this, from the same items "
                f"({', '.join(ref(i) for i in sorted(cited))}). Do not propose it again.",
                details={"rejected_id": int(row[0]), "observations": sorted(cited)},
            )


def evidence_items(conn: Connection, ids: Sequence[int], grant: Grant) -> list[EvidenceItem]:
    """The cited observations as a reviewer sees them: ref, where, who, when and an
    excerpt (erased ones say so). Items ``grant`` cannot see are named by ref only."""
    if not ids:
        return []
    visible, params = visible_clause(grant)
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT {COLUMNS}, {FACET_COLUMNS} FROM observations o {FACETS_JOIN} "
        f"WHERE o.id IN ({marks}) AND {visible}",
        (*ids, *params),
    ).fetchall()
    found = {int(r[0]): observation_of(r) for r in rows}
    out: list[EvidenceItem] = []
    for observation_id in ids:
        item = found.get(observation_id)
        if item is None:
            out.append(EvidenceItem(ref=ref(observation_id), visible=False))
            continue
        text = " ".join(item.text.split())
        if len(text) > EXCERPT_CHARS:
            text = text[: EXCERPT_CHARS - 1] + "…"
        out.append(
            EvidenceItem(
                ref=ref(observation_id),
                visible=True,
                source=item.source,
                channel=item.channel,
                author=item.author,
                at=item.received_at,
                excerpt="(erased by the owner)" if item.purged else text,
            )
        )
    return out


def evidence_line(item: Mapping[str, Any]) -> str:
    """One cited item for a person: ``obs:12 Anna in #ops: "we ship Thursday"``."""
    if not item.get("visible"):
        return f"{item.get('ref')} (not in your scopes)"
    where = f" in {item['channel']}" if item.get("channel") else f" via {item.get('source')}"
    who = str(item.get("author") or "someone")
    return f'{item.get("ref")} {who}{where}: "{item.get("excerpt", "")}"'
