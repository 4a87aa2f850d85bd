"""A save that says again what a live memory in the same scopes says does not pile up:
the owner is answered with the memory, an agent's becomes a proposed merge, and search
shows records that say the same as one result ("also said as"). With MAMA's default
model (multilingual-e5-small), as the owner's store runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig, NotGrantedError
from mama_core.memory.restatements import (
    NEAR_SCAN,
    RANKED_MATCHES,
    SCAN_ALL,
    NearRecords,
    find_restatement,
    find_restatement_near,
    same_meaning,
    words_overlap,
)
from mama_core.memory.verify import verify_store
from mama_core.store import Store
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    save,
)

THURSDAYS = "We ship on Thursdays"


@pytest.fixture
def e5_engine(store: Store, e5_embedder: GgufEmbedder) -> Iterator[Engine]:
    with Engine(store, e5_embedder, EngineConfig()) as opened:
        yield opened


def active_ids(engine: Engine) -> list[int]:
    rows = engine.store.conn.execute(
        "SELECT id FROM judgments WHERE status = 'active' ORDER BY id"
    ).fetchall()
    return [int(r[0]) for r in rows]


def search(engine: Engine, query: str) -> list[dict[str, Any]]:
    return engine.dispatch("memory.search", {"query": query}, OWNER, OWNER_GRANT)["results"]


def agent_save(engine: Engine, summary: str, **fields: Any) -> dict[str, Any]:
    return save(engine, summary, session=AGENT, grant=agent_grant(), **fields)


def test_the_thursday_case_leaves_one_active_memory(e5_engine: Engine) -> None:
    first = save(e5_engine, THURSDAYS, scopes=["global"])
    assert first["status"] == "active"
    assert "duplicate_of" not in first
    events = event_count(e5_engine)

    again = save(e5_engine, THURSDAYS, scopes=["global"])
    reworded = save(e5_engine, "We ship on Thursday", scopes=["global"])

    for receipt in (again, reworded):
        assert receipt["code"] == "already_remembered"
        assert receipt["duplicate_of"] == first["judgment_id"]
        assert receipt["judgment_id"] == first["judgment_id"]
        assert f"#{first['judgment_id']}" in receipt["message"]
    assert active_ids(e5_engine) == [first["judgment_id"]]
    # Each restatement is a link in the log, never an edit: one event each, naming #N.
    assert event_count(e5_engine) == events + 2
    rows = e5_engine.store.conn.execute(
        "SELECT judgment_id, payload FROM events ORDER BY id DESC LIMIT 2"
    ).fetchall()
    assert {int(r[0]) for r in rows} == {first["judgment_id"]}
    assert all(f'"restates": {first["judgment_id"]}' in r[1] for r in rows)
    reader = e5_engine.store.new_connection()
    try:
        assert verify_store(reader, e5_engine.store.secret).ok
    finally:
        reader.close()
    # Positive control: another day is another fact, saved as its own memory.
    tuesdays = save(e5_engine, "We ship on Tuesdays", scopes=["global"])
    assert tuesdays["status"] == "active" and "duplicate_of" not in tuesdays
    assert active_ids(e5_engine) == [first["judgment_id"], tuesdays["judgment_id"]]
    found = {r["id"] for r in search(e5_engine, "when do we ship")}
    assert found >= {first["judgment_id"], tuesdays["judgment_id"]}


def test_the_owner_can_insist(e5_engine: Engine) -> None:
    first = save(e5_engine, THURSDAYS)
    insisted = save(e5_engine, "We ship on Thursday", even_if_duplicate=True)
    assert insisted["status"] == "active"
    assert insisted["code"] == "saved_anyway"
    assert insisted["duplicate_of"] == first["judgment_id"]
    assert insisted["judgment_id"] != first["judgment_id"]
    assert active_ids(e5_engine) == [first["judgment_id"], insisted["judgment_id"]]
    edge = e5_engine.store.conn.execute(
        "SELECT src_id, dst_id FROM edges WHERE kind = 'relates_to'"
    ).fetchall()
    assert [tuple(r) for r in edge] == [(insisted["judgment_id"], first["judgment_id"])]
    # The owner said they are two things: search does not fold one into the other.
    found = search(e5_engine, "ship Thursday")
    ids = [r["id"] for r in found]
    assert first["judgment_id"] in ids and insisted["judgment_id"] in ids
    assert all("also_said_as" not in r for r in found)


def test_an_agent_restating_proposes_a_merge_the_owner_reviews(e5_engine: Engine) -> None:
    first = save(e5_engine, THURSDAYS)
    proposed = agent_save(e5_engine, "We ship on Thursday")
    assert proposed["status"] == "proposed"
    assert proposed["code"] == "proposed_merge"
    assert proposed["duplicate_of"] == first["judgment_id"]
    assert active_ids(e5_engine) == [first["judgment_id"]]
    # Saying it again while it waits does not fill the review queue.
    again = agent_save(e5_engine, "We ship on Thursday")
    assert again["code"] == "already_proposed"
    assert again["duplicate_of"] == proposed["judgment_id"]
    proposed_count = e5_engine.store.conn.execute(
        "SELECT count(*) FROM judgments WHERE status = 'proposed'"
    ).fetchone()[0]
    assert proposed_count == 1
    # Only the owner can insist.
    with pytest.raises(NotGrantedError):
        agent_save(e5_engine, "We ship on Thursday", even_if_duplicate=True)
    # Positive control: an agent's new fact is saved active as before.
    other = agent_save(e5_engine, "The release branch is cut on Wednesdays")
    assert other["status"] == "active" and "duplicate_of" not in other

    # The owner's review shows what it says again.
    read = e5_engine.dispatch("memory.read", {"id": proposed["judgment_id"]}, OWNER, OWNER_GRANT)
    assert read["record"]["restates"] == {"id": first["judgment_id"], "summary": THURSDAYS}
    plain = e5_engine.dispatch("memory.read", {"id": other["judgment_id"]}, OWNER, OWNER_GRANT)
    assert "restates" not in plain["record"]

    e5_engine.dispatch("review.approve", {"id": proposed["judgment_id"]}, OWNER, OWNER_GRANT)
    assert first["judgment_id"] in active_ids(e5_engine)
    assert proposed["judgment_id"] in active_ids(e5_engine)
    found = search(e5_engine, "which day do we ship")
    ship = [r for r in found if r["id"] in (first["judgment_id"], proposed["judgment_id"])]
    assert len(ship) == 1
    assert ship[0]["also_said_as"][0]["id"] in (first["judgment_id"], proposed["judgment_id"])


def test_the_same_text_in_another_scope_is_not_merged(e5_engine: Engine) -> None:
    alpha = save(e5_engine, THURSDAYS, scopes=["project:alpha"])
    beta = save(e5_engine, THURSDAYS, scopes=["project:beta"])
    assert beta["status"] == "active" and "duplicate_of" not in beta
    both = save(e5_engine, THURSDAYS, scopes=["project:alpha", "project:beta"])
    assert "duplicate_of" not in both
    # Positive control: in the same scope it is the same memory.
    again = save(e5_engine, THURSDAYS, scopes=["project:alpha"])
    assert again["code"] == "already_remembered"
    assert again["duplicate_of"] == alpha["judgment_id"]
    # Another kind in the same scope is not merged either.
    decision = save(e5_engine, THURSDAYS, "decision", scopes=["project:alpha"])
    assert "duplicate_of" not in decision


def test_a_retired_memory_does_not_swallow_a_new_save(e5_engine: Engine) -> None:
    first = save(e5_engine, THURSDAYS)
    assert save(e5_engine, THURSDAYS)["code"] == "already_remembered"  # positive control
    e5_engine.dispatch(
        "memory.retire", {"id": first["judgment_id"], "reason": "moved"}, OWNER, OWNER_GRANT
    )
    back = save(e5_engine, THURSDAYS)
    assert back["status"] == "active"
    assert "duplicate_of" not in back
    assert back["judgment_id"] != first["judgment_id"]


def test_search_shows_records_that_say_the_same_as_one_result(e5_engine: Engine) -> None:
    # A store that already holds three Thursdays (approved merges, or saved before
    # saves were matched) shows them as one result; the Tuesday fact stays its own.
    first = save(e5_engine, THURSDAYS)
    approved = []
    for text in ("We ship on Thursday", "We ship every Thursday"):
        proposed = agent_save(e5_engine, text)
        assert proposed["code"] == "proposed_merge"
        e5_engine.dispatch("review.approve", {"id": proposed["judgment_id"]}, OWNER, OWNER_GRANT)
        approved.append(proposed["judgment_id"])
    tuesdays = save(e5_engine, "We ship on Tuesdays")
    thursdays = {first["judgment_id"], *approved}
    assert thursdays <= set(active_ids(e5_engine))

    found = search(e5_engine, "ship on Thursdays")
    grouped = [r for r in found if r["id"] in thursdays]
    assert len(grouped) == 1
    also = grouped[0]["also_said_as"]
    assert {grouped[0]["id"], *(a["id"] for a in also)} == thursdays
    assert {a["summary"] for a in also} <= {
        THURSDAYS,
        "We ship on Thursday",
        "We ship every Thursday",
    }
    assert tuesdays["judgment_id"] in [r["id"] for r in found]
    assert not any(r["id"] in thursdays for r in found if r is not grouped[0])


def test_a_crowded_neighbourhood_is_narrowed_by_the_words(
    e5_engine: Engine, e5_embedder: GgufEmbedder
) -> None:
    first = save(e5_engine, THURSDAYS)
    for text in ("The printer is on floor 2", "Lunch is at noon", "We ship on Tuesdays"):
        save(e5_engine, text)
    scale = e5_embedder.score_scale

    def lookup(summary: str, scan_all: int, ranked: int = RANKED_MATCHES) -> int | None:
        found = find_restatement(
            e5_engine.store.conn,
            kind="fact",
            scopes=["global"],
            summary=summary,
            applies_when=None,
            vector=e5_embedder.embed_one(summary),
            model_id=e5_embedder.model_id,
            threshold=scale.restatement_threshold,
            swap_same_meaning=scale.swap_same_meaning,
            statuses=["active"],
            scan_all=scan_all,
            ranked_matches=ranked,
        )
        return None if found is None else found.judgment_id

    # Read whole, and narrowed to what the indexes find for the words: the same answer.
    for scan_all in (SCAN_ALL, 0):
        assert lookup("We ship on Thursday", scan_all) == first["judgment_id"]
        assert lookup("We ship on Wednesdays", scan_all) is None
    # "ship" matches two records, "thursday" one: with room to rank one match, the
    # rarer word alone is ranked; with none, the rarest word's latest matches stand in.
    for ranked in (1, 0):
        assert lookup("We ship on Thursday", 0, ranked) == first["judgment_id"]
        assert lookup("We ship on Wednesdays", 0, ranked) is None


def test_both_reads_keep_to_exactly_the_same_scopes(
    e5_engine: Engine, e5_embedder: GgufEmbedder
) -> None:
    # The neighbourhood is read through its first scope's bindings, or from the words'
    # candidates by id; either way only records bound to exactly the save's scopes count.
    alpha = save(e5_engine, THURSDAYS, scopes=["project:alpha"])
    pair = save(e5_engine, THURSDAYS, scopes=["project:alpha", "project:beta"])
    three = save(e5_engine, THURSDAYS, scopes=["project:alpha", "project:beta", "project:gamma"])
    ids = {alpha["judgment_id"], pair["judgment_id"], three["judgment_id"]}
    assert len(ids) == 3  # three records, none merged into another
    scale = e5_embedder.score_scale

    def lookup(scopes: list[str], scan_all: int) -> int | None:
        found = find_restatement(
            e5_engine.store.conn,
            kind="fact",
            scopes=scopes,
            summary="We ship on Thursday",
            applies_when=None,
            vector=e5_embedder.embed_one("We ship on Thursday"),
            model_id=e5_embedder.model_id,
            threshold=scale.restatement_threshold,
            swap_same_meaning=scale.swap_same_meaning,
            statuses=["active"],
            scan_all=scan_all,
        )
        return None if found is None else found.judgment_id

    for scan_all in (SCAN_ALL, 0):
        assert lookup(["project:beta", "project:alpha"], scan_all) == pair["judgment_id"]
        assert lookup(["project:alpha"], scan_all) == alpha["judgment_id"]
        assert (
            lookup(["project:gamma", "project:alpha", "project:beta"], scan_all)
            == three["judgment_id"]
        )
        assert lookup(["project:beta"], scan_all) is None
        assert lookup(["project:beta", "project:gamma"], scan_all) is None


def test_rules_of_one_shape_that_share_only_their_context_are_kept_apart(
    e5_engine: Engine,
) -> None:
    """e5 scores short rules with the same "when it applies" close (the tray's balloon
    test lost its fifth proposal to this): most of the summary's own words must agree."""
    when = "writing to the owner"
    rules = ["Prefer tables", "Sign with initials", "Quote the ticket number"]
    saved = [save(e5_engine, r, kind="preference", applies_when=when) for r in rules]
    assert [s["status"] for s in saved] == ["active"] * 3
    assert all("duplicate_of" not in s for s in saved)
    # Positive control: the same rule reworded, in the same context, is still caught.
    again = save(e5_engine, "Prefer a table", kind="preference", applies_when=when)
    assert again["code"] == "already_remembered"
    assert again["duplicate_of"] == saved[0]["judgment_id"]


def test_the_word_gate_counts_the_shorter_texts_content_words() -> None:
    assert words_overlap("We ship on Thursdays", "We ship on Thursday") == 1.0
    assert words_overlap("Quote the ticket number", "Sign with initials") == 0.0
    # Function words do not count; a script without spaces is compared by character pairs.
    assert words_overlap("The deploy is on the main branch", "deploy main branch") == 1.0
    assert words_overlap("会議は月曜日", "会議は月曜日です") == 1.0
    assert words_overlap("会議は月曜日", "請求書を送る") == 0.0
    # Gated before any vector reasoning: a close cosine alone does not merge.
    assert not same_meaning("Quote the ticket number", "Sign with initials", 0.99, 0.93)
    assert same_meaning("We ship on Thursdays", "We ship on Thursday", 0.99, 0.93)


def test_a_seed_that_turns_the_check_off_keeps_every_record(
    store: Store, e5_embedder: GgufEmbedder
) -> None:
    """``check_restatements=False`` (a benchmark's generated seed) saves as given; the
    control is the default engine above answering the same save already_remembered."""
    with Engine(store, e5_embedder, EngineConfig(check_restatements=False)) as engine:
        first = save(engine, THURSDAYS)
        again = save(engine, THURSDAYS)
        assert again["status"] == "active" and "duplicate_of" not in again
        assert active_ids(engine) == [first["judgment_id"], again["judgment_id"]]


def test_with_the_vector_cache_loaded_the_same_restatements_are_found(e5_engine: Engine) -> None:
    """A long-running engine (its vector cache loaded by a search or an import) finds
    the records a save may restate in memory: the Thursday case answers as above."""
    e5_engine.recall()
    assert e5_engine.vector_cache is not None  # the path under test: candidates from memory
    first = save(e5_engine, THURSDAYS, scopes=["global"])
    again = save(e5_engine, THURSDAYS, scopes=["global"])
    reworded = save(e5_engine, "We ship on Thursday", scopes=["global"])
    for receipt in (again, reworded):
        assert receipt["code"] == "already_remembered"
        assert receipt["duplicate_of"] == first["judgment_id"]
    # Positive controls: another day, and the same words in another scope, are saved.
    tuesdays = save(e5_engine, "We ship on Tuesdays", scopes=["global"])
    elsewhere = save(e5_engine, THURSDAYS, scopes=["project:alpha"])
    for receipt in (tuesdays, elsewhere):
        assert receipt["status"] == "active" and "duplicate_of" not in receipt
    assert active_ids(e5_engine) == [
        first["judgment_id"],
        tuesdays["judgment_id"],
        elsewhere["judgment_id"],
    ]


def test_an_import_sees_its_own_earlier_saves_through_the_cache(e5_engine: Engine) -> None:
    """In one transaction the cache knows nothing of the import's earlier saves (it
    learns at commit): the writer keeps them for the saves after them."""
    e5_engine.recall()
    texts = [THURSDAYS, "Lunch is at noon", "We ship on Thursday", "We ship on Tuesdays"]
    receipts = e5_engine.dispatch_batch(
        "memory.save",
        [{"kind": "fact", "summary": t, "scopes": ["global"]} for t in texts],
        OWNER,
        OWNER_GRANT,
    )
    first = receipts[0]["judgment_id"]
    assert receipts[2]["code"] == "already_remembered" and receipts[2]["duplicate_of"] == first
    assert all("duplicate_of" not in receipts[i] for i in (0, 1, 3))  # positive control
    # Committed now: the next transaction finds it in the cache itself.
    assert save(e5_engine, THURSDAYS, scopes=["global"])["duplicate_of"] == first


def test_the_exact_words_are_found_by_their_keyed_hash(
    e5_engine: Engine, e5_embedder: GgufEmbedder
) -> None:
    """A save whose vector is far from the record's (other details, say) but whose
    normalised words are the same is found by one lookup of ``said_keys``."""
    first = save(e5_engine, THURSDAYS)
    save(e5_engine, "Lunch is at noon")
    e5_engine.recall()
    cache = e5_engine.vector_cache
    assert cache is not None
    scale = e5_embedder.score_scale
    far = np.zeros(e5_embedder.dim, dtype=np.float32)
    far[0] = 1.0  # no record's vector is near this one: only the words can match
    secret = e5_engine.store.secret

    def lookup(summary: str) -> int | None:
        found = find_restatement_near(
            e5_engine.store.conn,
            NearRecords(lambda: cache),
            cache,
            kind="fact",
            scopes=["global"],
            summary=summary,
            applies_when=None,
            said_key=secret.said_key(summary, None),
            vector=far,
            model_id=e5_embedder.model_id,
            threshold=scale.restatement_threshold,
            swap_same_meaning=scale.swap_same_meaning,
            statuses=["active"],
        )
        return None if found is None else found.judgment_id

    assert lookup("we ship on THURSDAYS!") == first["judgment_id"]
    assert lookup("We ship on Thursday") is None  # reworded: the vector's job, not the key's
    # A purged record's key goes with its text.
    e5_engine.dispatch(
        "memory.purge", {"id": first["judgment_id"], "reason": "test"}, OWNER, OWNER_GRANT
    )
    keys = e5_engine.store.conn.execute(
        "SELECT count(*) FROM said_keys WHERE judgment_id = ?", (first["judgment_id"],)
    ).fetchone()[0]
    assert keys == 0
    assert lookup(THURSDAYS) is None


def test_a_crowded_neighbourhood_in_the_cache_is_narrowed_by_the_words(
    e5_engine: Engine, e5_embedder: GgufEmbedder
) -> None:
    first = save(e5_engine, THURSDAYS)
    for text in ("The printer is on floor 2", "Lunch is at noon", "We ship on Tuesdays"):
        save(e5_engine, text)
    e5_engine.recall()
    cache = e5_engine.vector_cache
    assert cache is not None
    scale = e5_embedder.score_scale

    def lookup(summary: str, scan_up_to: int) -> int | None:
        found = find_restatement_near(
            e5_engine.store.conn,
            NearRecords(lambda: cache),
            cache,
            kind="fact",
            scopes=["global"],
            summary=summary,
            applies_when=None,
            said_key=e5_engine.store.secret.said_key(summary, None),
            vector=e5_embedder.embed_one(summary),
            model_id=e5_embedder.model_id,
            threshold=scale.restatement_threshold,
            swap_same_meaning=scale.swap_same_meaning,
            statuses=["active"],
            scan_up_to=scan_up_to,
        )
        return None if found is None else found.judgment_id

    # Scored whole, and narrowed to what the word index finds: the same answer.
    for scan_up_to in (NEAR_SCAN, 0):
        assert lookup("We ship on Thursday", scan_up_to) == first["judgment_id"]
        assert lookup("We ship on Wednesdays", scan_up_to) is None
    # Another kind, or other scopes, is another neighbourhood (positive control above).
    assert (
        cache.close_rows(
            e5_embedder.embed_one(THURSDAYS), "decision", frozenset({"global"}), 0.0, 10
        )[0]
        == []
    )
    assert cache.close_rows(
        e5_embedder.embed_one(THURSDAYS), "fact", frozenset({"global"}), 0.0, 10
    )[0]
