"""Edit and approve at the command line: ``mama approve ID --text`` (and ``mama
proposals approve ID --text``) make the owner's words the active record in place of a
source's proposal, keeping its kind, scopes, terms and evidence; the proposal stays,
superseded, as its history. ``mama proposals`` shows what each proposal rests on. The
real console script on a real store; the proposals made by a real engine as an agent
in a source-delta turn."""

from __future__ import annotations

from pathlib import Path

from mama_core.embeddings import Embedder
from mama_core.memory import Engine, Grant, InvalidTransitionError
from mama_core.session import ActorKind, SessionFacts, TurnKind
from mama_core.store import DbKey, Store
from tests.app.test_cli_memory import Mama
from tests.conftest import TEST_KEY_HEX

OPS = "channel:slack/#ops"
SOURCE_AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="claude-code", turn=TurnKind.SOURCE_DELTA
)


def observe(store: Store, external_id: str, author: str, text: str) -> int:
    """An item as the Slack connector keeps it (on a connection of its own)."""
    conn = store.new_connection()
    try:
        oid = int(
            conn.execute(
                "INSERT INTO observations (source, external_id, author, text, received_at) "
                "VALUES ('slack:T1', ?, ?, ?, '2026-12-01T09:00:00.000000Z')",
                (external_id, author, text),
            ).lastrowid
            or 0
        )
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (?, '#ops', ?, '{}')",
            (oid, OPS),
        )
    finally:
        conn.close()
    return oid


def test_edit_and_approve_replaces_a_source_proposal_with_the_owners_words(
    tmp_path: Path, model_cache_dir: Path, embedder: Embedder
) -> None:
    mama = Mama(tmp_path / "home", model_cache_dir)
    mama.json("remember", "Standups are at 9:30", "--kind", "fact")  # makes the store
    with (
        Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder) as engine,
    ):
        said = observe(store, "C1/1", "anna", "Anna: we ship on Thursdays from January on")
        asked = observe(store, "C1/2", "dana", "Dana: can you send me the deck by Friday 17:00?")
        grant = Grant.agent([OPS], OPS)
        decision = engine.dispatch(
            "memory.save",
            {"kind": "decision", "summary": "We ship on Thursdays", "evidence": [f"obs:{said}"]},
            SOURCE_AGENT,
            grant,
        )["judgment_id"]
        deck = engine.dispatch(
            "memory.save",
            {
                "kind": "commitment",
                "summary": "Send Dana the deck",
                "evidence": [f"obs:{asked}"],
                "commitment": {
                    "owed_by": "owner",
                    "owed_to": "Dana",
                    "due": "2026-12-04T17:00:00+01:00",
                },
            },
            SOURCE_AGENT,
            grant,
        )["judgment_id"]

    # The review lists what each proposal rests on.
    listed = mama.run("proposals")
    assert listed.returncode == 0, listed.stderr
    assert (
        f'    rests on obs:{said} anna in #ops: "Anna: we ship on Thursdays from January on"'
        in listed.stdout
    )
    by_id = {p["id"]: p for p in mama.json("proposals")["proposals"]}
    assert by_id[deck]["evidence"] == [
        f'obs:{asked} dana in #ops: "Dana: can you send me the deck by Friday 17:00?"'
    ]

    edited = mama.run("approve", str(decision), "--text", "We ship on Thursdays from January")
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout.startswith("approved as edited #") and edited.stdout.strip().endswith(
        ": active"
    )
    new_id = int(edited.stdout.split("#")[1].split(":")[0])
    shown = mama.json("show", str(new_id))
    record = shown["record"]
    assert record["summary"] == "We ship on Thursdays from January"
    assert record["status"] == "active" and record["kind"] == "decision"
    assert record["scopes"] == [OPS]
    assert record["provenance"]["evidence"] == [f"obs:{said}"]
    assert record["provenance"]["actor_kind"] == "owner"
    # The proposal is not edited: it stays, superseded by the owner's words, as history.
    old = mama.json("show", str(decision))["record"]
    assert old["summary"] == "We ship on Thursdays"
    assert old["status"] == "superseded" and old["superseded_by"] == new_id
    assert [h["id"] for h in shown["history"]] == [decision]

    # The commitment through ``mama proposals approve``: its terms and zone kept.
    done = mama.json("proposals", "approve", str(deck), "--text", "Send Dana the Q1 deck")
    receipt = done["results"][0]["receipt"]
    assert receipt["status"] == "active"
    commitment = mama.json("show", str(receipt["judgment_id"]))["record"]
    assert commitment["summary"] == "Send Dana the Q1 deck"
    assert commitment["commitment"]["owed_to"] == "Dana"
    assert commitment["commitment"]["due_at"] == "2026-12-04T16:00:00.000000Z"
    assert commitment["commitment"]["source_observations"] == [asked]
    assert mama.json("show", str(deck))["record"]["status"] == "superseded"

    # Decided already: one clear line and the code of invalid_transition, nothing written.
    again = mama.run("approve", str(decision), "--text", "We ship on Fridays")
    assert again.returncode == InvalidTransitionError.exit_code
    assert again.stderr.strip().startswith("mama: invalid_transition: ")
    assert "needs it proposed" in again.stderr and "Traceback" not in again.stderr
    # --text with a settings change, or two ids, is a usage error.
    assert mama.run("approve", "--change", "3", "--text", "x").returncode == 2
    assert mama.run("proposals", "approve", "1", "2", "--text", "x").returncode == 2
    assert mama.json("proposals")["proposals"] == []
    assert mama.run("verify").returncode == 0
