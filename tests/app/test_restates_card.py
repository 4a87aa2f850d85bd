"""A proposed merge's review card says which memory it says again and what approving
and rejecting mean; other proposals' cards do not."""

from __future__ import annotations

from app.present.cards import card_text

PROPOSAL = {
    "id": 7,
    "kind": "fact",
    "status": "proposed",
    "summary": "We ship on Thursday",
    "scopes": ["global"],
    "provenance": {"actor_name": "claude-code", "turn": "owner_message"},
}


def test_a_proposed_merge_names_the_memory_it_says_again() -> None:
    merge = {**PROPOSAL, "restates": {"id": 3, "summary": "We ship on Thursdays"}}
    text = card_text(merge)
    assert "Says again what #3 says: We ship on Thursdays" in text
    assert "Approve to keep this wording beside #3" in text
    # Positive control: the same proposal without a match is a plain proposal card.
    plain = card_text(PROPOSAL)
    assert "Says again" not in plain
    assert plain.startswith("**New proposal #7** (fact)")
    # Once decided, the card no longer asks.
    assert "Says again" not in card_text({**merge, "status": "active"})
