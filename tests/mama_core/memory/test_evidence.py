"""Evidence: a proposal from a source cites the items it rests on (``obs:N``), the host
checks the caller may see each one and keeps the refs in the provenance, every read
shows them, and a proposal the owner rejected is not proposed again from the same
items (the same words, or the same meaning by the tombstone matcher) while a new
text from those items, or the same text from other items, still lands."""

from __future__ import annotations

from typing import Any

import pytest

from mama_core.errors import AlreadyRejectedError
from mama_core.memory import Engine, InvalidInputError, NotFoundError, verify_store
from mama_core.scopes.grants import Grant
from tests.mama_core.memory.helpers import (
    OWNER,
    OWNER_GRANT,
    SOURCE_TURN_AGENT,
    event_count,
)
from tests.mama_core.memory.test_commitments import connector_item

SLACK = "channel:slack"


def propose(
    engine: Engine, summary: str, evidence: list[Any], kind: str = "decision", **more: Any
) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": kind, "summary": summary, "evidence": evidence, **more}
    return engine.dispatch("memory.save", payload, SOURCE_TURN_AGENT, Grant.agent([SLACK]))


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["record"]


def reject(engine: Engine, jid: int) -> None:
    engine.dispatch("review.reject", {"id": jid, "reason": "not what we said"}, OWNER, OWNER_GRANT)


def test_a_proposal_keeps_its_refs_and_reads_show_the_items(engine: Engine) -> None:
    first = connector_item(engine, "C1/1", SLACK, "Anna: we ship on Thursdays from now on")
    second = connector_item(engine, "C1/2", SLACK, "Bob: agreed, Thursdays")
    saved = propose(engine, "The team ships on Thursdays", [f"obs:{second}", first])
    record = read(engine, saved["judgment_id"])
    assert record["status"] == "proposed"
    assert record["provenance"]["evidence"] == [f"obs:{first}", f"obs:{second}"]
    assert [e["ref"] for e in record["evidence"]] == [f"obs:{first}", f"obs:{second}"]
    assert record["evidence"][0]["excerpt"] == "Anna: we ship on Thursdays from now on"
    assert record["evidence"][0]["author"] == "dana" and record["evidence"][0]["channel"] == "C1"
    assert verify_store(engine.store.conn, engine.store.secret).ok  # the refs: under the chain


def test_a_ref_outside_the_callers_scopes_is_refused_with_a_clear_line(engine: Engine) -> None:
    mine = connector_item(engine, "C1/1", SLACK, "Anna: the launch moves to May")
    foreign = connector_item(engine, "C9/1", "channel:board", "Board minutes")
    before = event_count(engine)
    for cited in ([f"obs:{foreign}"], [mine, foreign], ["obs:999999"]):
        with pytest.raises(NotFoundError) as refused:
            propose(engine, "The launch moves to May", cited)
        assert "not an item of this turn nor an observation in your scopes" in (
            refused.value.message
        )
        assert "obs:" in refused.value.message
    assert event_count(engine) == before  # nothing written
    # Control: the item in the caller's scope is accepted.
    assert propose(engine, "The launch moves to May", [mine])["status"] == "proposed"


def test_a_malformed_ref_is_invalid_input(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as refused:
        propose(engine, "x", ["message 12"])
    assert refused.value.details["fields"] == ["evidence.0"]
    item = connector_item(engine, "C1/1", SLACK, "Anna: x")
    assert propose(engine, "x", [str(item)])["status"] == "proposed"  # control: "12" is a ref


def test_a_rejected_text_is_not_proposed_again_from_the_same_items(engine: Engine) -> None:
    item = connector_item(engine, "C1/1", SLACK, "Anna: we ship on Thursdays from now on")
    other = connector_item(engine, "C1/7", SLACK, "Carl: Thursdays it is, confirmed again")
    rejected = propose(engine, "The team ships on Thursdays", [item])["judgment_id"]
    reject(engine, rejected)
    before = event_count(engine)

    # The same words (any case and punctuation) from the same item: refused quietly.
    with pytest.raises(AlreadyRejectedError) as refused:
        propose(engine, "the team ships on thursdays!", [f"obs:{item}"])
    assert refused.value.code == "already_rejected"
    assert refused.value.message.startswith("Already rejected by the owner")
    # The same meaning in other words (the tombstone matcher), same item: refused.
    with pytest.raises(AlreadyRejectedError):
        propose(engine, "The team ships every Thursday", [item])
    assert event_count(engine) == before  # no record, no event, so no card

    # Controls: a different text from the same item lands ...
    assert propose(engine, "Anna owns the release schedule", [item])["status"] == "proposed"
    # ... the same text resting on other items lands ...
    assert propose(engine, "The team ships on Thursdays", [other])["status"] == "proposed"
    # ... and the same text with new support beside the old item lands.
    assert propose(engine, "The team ships on Thursdays", [item, other])["status"] == "proposed"
    # A different fact that the matcher tells apart (another weekday) lands too.
    assert propose(engine, "The team ships on Fridays", [item])["status"] == "proposed"


def test_only_a_rejection_blocks_and_the_owner_is_never_blocked(engine: Engine) -> None:
    item = connector_item(engine, "C1/1", SLACK, "Anna: budget frozen until March")
    waiting = propose(engine, "The budget is frozen until March", [item])["judgment_id"]
    # A proposal still waiting (not rejected) does not block: the same words again are
    # answered with the waiting one, not refused and not saved twice.
    again = propose(engine, "The budget is frozen until March", [item])
    assert (again["code"], again["judgment_id"]) == ("already_proposed", waiting)
    reject(engine, waiting)
    with pytest.raises(AlreadyRejectedError):
        propose(engine, "The budget is frozen until March", [item])
    # The owner saying it is the owner's word: it lands active.
    owner_save = engine.dispatch(
        "memory.save",
        {"kind": "decision", "summary": "The budget is frozen until March", "evidence": [item]},
        OWNER,
        OWNER_GRANT,
    )
    assert owner_save["status"] == "active"


def test_a_commitments_sources_and_evidence_are_one_list(engine: Engine) -> None:
    asked = connector_item(engine, "C1/1", SLACK, "Dana: can you send the deck by Friday?")
    said = connector_item(engine, "C1/2", SLACK, "Owner: yes, Friday")
    saved = propose(
        engine,
        "Send Dana the deck",
        [f"obs:{said}"],
        kind="commitment",
        commitment={"owed_by": "owner", "owed_to": "Dana", "source_observations": [asked]},
    )
    record = read(engine, saved["judgment_id"])
    assert record["commitment"]["source_observations"] == [asked, said]
    assert record["provenance"]["evidence"] == [f"obs:{asked}", f"obs:{said}"]
