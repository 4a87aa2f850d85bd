"""Bad input is ``invalid_input`` (or a store error with its own code), never an
internal error: ids past 2**53 or 2**63, summaries that show nothing, scope names
with invisible or direction-changing characters, a full disk. Each refusal sits
beside the same call with good input going through."""

from __future__ import annotations

from typing import Any

import pytest

from mama_core.errors import DiskFullError
from mama_core.ids import MAX_ID
from mama_core.memory import Engine, InvalidInputError, NotFoundError
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, event_count, save

TOO_BIG = [2**53, 2**63 - 1, 2**63, 2**64, 10**30]


def _id_payloads(target: int, other: int) -> list[tuple[str, dict[str, Any]]]:
    """Every action that takes an id, with ``target`` in the id's place."""
    return [
        ("memory.read", {"id": target}),
        ("memory.retire", {"id": target, "reason": "old"}),
        ("memory.retire", {"id": other, "reason": "old", "status": "superseded", "by": target}),
        ("memory.update_outcome", {"id": target, "outcome": "it worked"}),
        ("memory.link", {"src": target, "dst": other, "kind": "supports"}),
        ("memory.link", {"src": other, "dst": target, "kind": "supports"}),
        ("memory.timeline", {"id": target}),
        ("memory.save", {"kind": "fact", "summary": "newer", "replaces": [target]}),
        ("review.approve", {"id": target}),
        ("review.reject", {"id": target, "reason": "no"}),
        ("memory.purge", {"id": target, "reason": "erase"}),
        ("memory.purge", {"observation_id": target, "reason": "erase"}),
        ("memory.tombstone", {"id": target, "reason": "never again"}),
        ("tombstone.lift", {"tombstone_id": target, "reason": "fine again"}),
        ("memory.restore", {"id": target, "reason": "back again"}),
    ]


@pytest.mark.parametrize("big", TOO_BIG)
def test_ids_past_2_to_the_53_are_invalid_input(engine: Engine, big: int) -> None:
    other = save(engine, "Tea is served at four")["judgment_id"]
    events = event_count(engine)
    for action, payload in _id_payloads(big, other):
        with pytest.raises(InvalidInputError) as info:
            engine.dispatch(action, payload, OWNER, OWNER_GRANT)
        assert info.value.code == "invalid_input", action
    assert event_count(engine) == events


def test_the_largest_id_is_taken_and_simply_not_found(engine: Engine) -> None:
    """Control: the bound is where it says; inside it an unknown id is not_found."""
    other = save(engine, "Tea is served at four")["judgment_id"]
    for action, payload in _id_payloads(MAX_ID, other):
        if action in ("memory.timeline", "memory.save", "memory.link"):
            continue  # a timeline of no record is empty; save/link check targets differently
        with pytest.raises(NotFoundError):
            engine.dispatch(action, payload, OWNER, OWNER_GRANT)
    shown = engine.dispatch("memory.read", {"id": other}, OWNER, OWNER_GRANT)
    assert shown["record"]["summary"] == "Tea is served at four"


INVISIBLE_SUMMARIES = [
    "\u200b",
    "\u200b\u200c\u200d",
    " \u2060 \ufeff ",
    "\u202e\u202c",
    "\u3164",  # Hangul filler: a letter drawn as nothing
    "\u00a0\u2800",
    "\x1b\x07",
]


@pytest.mark.parametrize("summary", INVISIBLE_SUMMARIES)
def test_a_summary_of_only_invisible_characters_is_refused(engine: Engine, summary: str) -> None:
    events = event_count(engine)
    with pytest.raises(InvalidInputError) as info:
        save(engine, summary)
    assert "summary" in info.value.details["fields"]
    assert event_count(engine) == events


def test_a_summary_with_visible_text_around_marks_is_taken(engine: Engine) -> None:
    """Control: the same marks beside visible text pass (a ZWJ emoji, Persian with ZWNJ)."""
    for summary in (
        "Ship \u200bit",
        "\U0001f468\u200d\U0001f4bb pairs on Fridays",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, with a ZWNJ
    ):
        assert save(engine, summary)["status"] == "active"


BAD_SCOPES = [
    "project:web\u200b",
    "project:\u200dweb",
    "project:we\u2060b",
    "project:web\ufeff",
    "project:\u202ebew",
    "project:web\u202a",
    "user:ann\u2066",
    "channel:ops\u2069",
    "project:web\u200e",
    "project:web\x85",
]


@pytest.mark.parametrize("scope", BAD_SCOPES)
def test_scope_names_refuse_bidi_and_zero_width(engine: Engine, scope: str) -> None:
    events = event_count(engine)
    with pytest.raises(InvalidInputError) as info:
        save(engine, "Deploys go through the pipeline", scopes=[scope])
    assert info.value.details["fields"] == ["scopes.0"]
    with pytest.raises(InvalidInputError):
        engine.dispatch(
            "memory.search", {"query": "deploys", "scopes": [scope]}, OWNER, OWNER_GRANT
        )
    assert event_count(engine) == events


def test_scope_names_with_visible_unicode_are_taken(engine: Engine) -> None:
    """Control: a scope with accents or another script is a good scope."""
    for scope in ("project:web", "project:café", "user:аня", "channel:運用"):
        saved = save(engine, f"Deploys go through the pipeline in {scope}", scopes=[scope])
        assert saved["status"] == "active"


def test_a_full_disk_is_disk_full_and_writes_nothing(engine: Engine) -> None:
    """SQLITE_FULL, simulated with ``max_page_count`` on the writer's connection (the
    same error SQLite returns when the file system has no room), is ``disk_full``."""
    conn = engine.store.conn
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    events = event_count(engine)
    conn.execute(f"PRAGMA max_page_count = {pages}")
    try:
        with pytest.raises(DiskFullError) as info:
            save(engine, "A long note about the garden", details="soil " * 4000)
        assert info.value.code == "disk_full"
        assert event_count(engine) == events
    finally:
        conn.execute("PRAGMA max_page_count = 1073741823")
    # Control: with room again the same write goes through.
    assert (
        save(engine, "A long note about the garden", details="soil " * 4000)["status"] == "active"
    )
    assert event_count(engine) == events + 1
