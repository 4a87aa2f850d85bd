"""The transition table (``mama_core.memory.verbs``) is what the handlers do: every verb
on a record in every status, by the owner and by an agent, is refused with the code the
table names (or done when it names none), through the real engine."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from mama_core.embeddings import Embedder
from mama_core.errors import MamaError
from mama_core.memory import CATALOG, Engine, EngineConfig, Grant, SessionFacts
from mama_core.memory.edit_approval import edited_save
from mama_core.memory.verbs import TABLE, Verb, allowed, refusal
from mama_core.model import STATUSES, Status
from mama_core.store import Store
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save

READERS: dict[str, tuple[SessionFacts, Grant]] = {
    "owner": (OWNER, OWNER_GRANT),
    "agent": (AGENT, agent_grant()),
}
WAITING = "active+change"
"""An owner's active record with a retirement an agent proposed to it, waiting."""


@pytest.fixture
def engine(store: Store, embedder: Embedder) -> Iterator[Engine]:
    with Engine(store, embedder, EngineConfig()) as opened:
        yield opened


def _make(engine: Engine, status: str, tag: str) -> int:
    """A record in ``status`` (or ``WAITING``), its words unique to ``tag``."""
    if status in (Status.PROPOSED, Status.REJECTED):
        proposal = save(
            engine, f"Prefer {tag} tabs", "preference", session=AGENT, grant=agent_grant()
        )
        jid = int(proposal["judgment_id"])
        if status == Status.REJECTED:
            engine.dispatch("review.reject", {"id": jid, "reason": "no"}, OWNER, OWNER_GRANT)
        return jid
    jid = int(save(engine, f"The {tag} server runs in Oslo")["judgment_id"])
    if status == Status.SUPERSEDED:
        save(engine, f"The {tag} server runs in Bergen", replaces=[jid])
    elif status in (Status.STALE, Status.CONTRADICTED):
        retire = {"id": jid, "reason": "moved", "status": status}
        engine.dispatch("memory.retire", retire, OWNER, OWNER_GRANT)
    elif status == Status.PURGED:
        engine.dispatch("memory.purge", {"id": jid, "reason": "gone"}, OWNER, OWNER_GRANT)
    elif status == WAITING:
        retire = {"id": jid, "reason": "moved", "status": "stale"}
        assert engine.dispatch("memory.retire", retire, AGENT, agent_grant())["proposed"]
    return jid


def _attempt(engine: Engine, verb: Verb, jid: int, reader: str, tag: str) -> str | None:
    """Do ``verb`` on ``jid`` as ``reader``: None when done, else the refusal's code."""
    session, grant = READERS[reader]
    payload: dict[str, Any] = {"id": jid}
    try:
        if verb is Verb.EDIT_APPROVE:
            record = engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["record"]
            engine.mutate(edited_save(record, f"Prefer {tag} spaces"), session, grant)
            return None
        if verb is Verb.REPLACE:
            replacing = {"kind": "fact", "summary": f"The {tag} server is gone", "replaces": [jid]}
            engine.dispatch("memory.save", replacing, session, grant)
            return None
        if verb in (Verb.REJECT, Verb.RETIRE, Verb.PURGE):
            payload["reason"] = "because"
        if verb is Verb.RETIRE:
            payload["status"] = "stale"
        engine.dispatch(TABLE[verb].action, payload, session, grant)
    except MamaError as exc:
        return exc.code
    return None


CASES = [
    (verb, reader)
    for verb, reader in itertools.product(Verb, READERS)
    # An agent has no edit-and-approve to call: an agent's save replacing a proposal
    # is the replace verb (ownership lands it proposed); the table says not_granted.
    if not (verb is Verb.EDIT_APPROVE and reader == "agent")
]


@pytest.mark.parametrize(("verb", "reader"), CASES, ids=[f"{v}-{r}" for v, r in CASES])
def test_every_status_is_refused_as_the_table_says(engine: Engine, verb: Verb, reader: str) -> None:
    seen: dict[str, str | None] = {}
    for n, status in enumerate((*STATUSES, WAITING)):
        tag = f"{verb.value.replace('_', '')}{reader}{n}"
        jid = _make(engine, status, tag)
        base = Status.ACTIVE if status == WAITING else status
        expected = refusal(verb, base, owner=reader == "owner", waiting_change=status == WAITING)
        seen[status] = _attempt(engine, verb, jid, reader, tag)
        assert seen[status] == expected, (verb, status, reader)
    # Positive control: each verb is done on some status (by the owner), so a test
    # refusing everything cannot pass.
    if reader == "owner":
        assert None in seen.values()
    assert any(code is not None for code in seen.values())


def test_agent_edit_approve_is_not_granted() -> None:
    assert refusal(Verb.EDIT_APPROVE, Status.PROPOSED, owner=False) == "not_granted"
    assert refusal(Verb.EDIT_APPROVE, Status.PROPOSED, owner=True) is None


def test_refusal_wording_names_what_it_needs(engine: Engine) -> None:
    jid = _make(engine, Status.PURGED, "wording")
    with pytest.raises(MamaError) as refused:
        engine.dispatch("memory.retire", {"id": jid, "reason": "x"}, OWNER, OWNER_GRANT)
    assert refused.value.code == "invalid_transition"
    assert refused.value.message == f"Judgment {jid} is purged; retiring it needs it active."
    with pytest.raises(MamaError) as replacing:
        engine.dispatch(
            "memory.save", {"kind": "fact", "summary": "x y", "replaces": [jid]}, OWNER, OWNER_GRANT
        )
    assert "replacing it needs it proposed or active" in replacing.value.message


def test_owner_only_agrees_with_the_catalog() -> None:
    """A verb the table keeps for the owner is an owner-only action in the catalog (the
    dispatcher refuses it first); edit-and-approve is the owner's save replacing it."""
    for verb, rule in TABLE.items():
        if rule.action != "memory.save":
            assert CATALOG.actions[rule.action].owner_only is rule.owner_only, verb
    assert TABLE[Verb.EDIT_APPROVE].owner_only and not TABLE[Verb.REPLACE].owner_only


@pytest.mark.parametrize("status", STATUSES)
def test_allowed_is_the_table_by_reader(status: str) -> None:
    owner = allowed(status, owner=True)
    agent = allowed(status, owner=False)
    assert set(agent) <= set(owner)
    assert all(not TABLE[Verb(v)].owner_only for v in agent)
    expected = {
        Status.PROPOSED: ["approve", "edit_approve", "reject", "replace", "purge"],
        Status.ACTIVE: ["retire", "replace", "purge"],
        Status.PURGED: [],
    }.get(Status(status), ["purge"])
    assert owner == expected
    waiting = allowed(status, owner=True, waiting_change=True)
    assert {"approve", "reject"} <= set(waiting)
    assert "edit_approve" not in waiting or status == Status.PROPOSED
    # Someone else's retirement waits behind the change already proposed.
    assert allowed(status, owner=False, waiting_change=True) == [v for v in agent if v != "retire"]


def test_each_read_carries_what_its_reader_may_do(engine: Engine) -> None:
    """memory.read and memory.search (words and none) give each record ``allowed``: the
    table for that reader, a change waiting on it included."""
    made = {status: _make(engine, status, f"reads{n}") for n, status in enumerate(STATUSES)}
    made[WAITING] = _make(engine, WAITING, "readswaiting")
    every = {"statuses": list(STATUSES), "limit": 50}
    for reader, (session, grant) in READERS.items():
        owner = reader == "owner"
        for status, jid in made.items():
            base = Status.ACTIVE if status == WAITING else status
            expected = allowed(base, owner=owner, waiting_change=status == WAITING)
            record = engine.dispatch("memory.read", {"id": jid}, session, grant)["record"]
            assert record["allowed"] == expected, (reader, status)
        found = engine.dispatch("memory.search", {"query": "", **every}, OWNER, OWNER_GRANT)
        words = engine.dispatch("memory.search", {"query": "server", **every}, OWNER, OWNER_GRANT)
        if not owner:  # an agent searches what is believed
            found = engine.dispatch("memory.search", {"query": ""}, session, grant)
            words = engine.dispatch("memory.search", {"query": "server"}, session, grant)
        for result in (found, words):
            rows = {row["id"]: row["allowed"] for row in result["results"]}
            assert made[WAITING] in rows  # positive control: the waiting record is listed
            for status, jid in made.items():
                if jid in rows:
                    base = Status.ACTIVE if status == WAITING else status
                    want = allowed(base, owner=owner, waiting_change=status == WAITING)
                    assert rows[jid] == want, (reader, status)
    owner_read = engine.dispatch("memory.read", {"id": made[Status.PROPOSED]}, OWNER, OWNER_GRANT)
    agent_read = engine.dispatch("memory.read", {"id": made[Status.PROPOSED]}, *READERS["agent"])
    assert "approve" in owner_read["record"]["allowed"]
    assert "approve" not in agent_read["record"]["allowed"]
    assert "replace" in agent_read["record"]["allowed"]
