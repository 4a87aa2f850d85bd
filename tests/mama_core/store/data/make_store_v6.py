"""Make store_v6.db with the MAMA of schema 6 (commit ce2637f), for the upgrade test.

Run from a checkout of that commit: ``PYTHONPATH=<it> python make_store_v6.py OUT``.
"""

import sys
from pathlib import Path

from mama_core.embeddings import load_embedder
from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
from mama_core.session import ActorKind, TurnKind
from mama_core.store import DbKey, Store

out = Path(sys.argv[1])
key = DbKey.from_secret("3f" * 32)
owner, grant = SessionFacts.owner_cli(), Grant.owner()
agent = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="claude-code", turn=TurnKind.OWNER_MESSAGE
)


def save(e: Engine, kind: str, summary: str, **more: object) -> int:
    payload = {"kind": kind, "summary": summary, **more}
    return e.dispatch("memory.save", payload, owner, grant)["judgment_id"]


with Store.open(out, key) as store:
    assert store.schema_version == 6
    emb = load_embedder(None, Path.home() / ".cache" / "mama-test-models")
    with Engine(store, emb, EngineConfig(checkpoint_wal_after_purge=False)) as e:
        a = save(e, "fact", "Quarterly report goes to Dana on Fridays", topic="reports")
        save(e, "decision", "We ship the beta in March", topic="beta")
        b = save(e, "fact", "Quarterly report goes to Dana on Mondays", replaces=[a])
        e.dispatch(
            "memory.save",
            {"kind": "preference", "summary": "Prefer short replies", "applies_when": "chat"},
            agent,
            Grant.agent(("global",)),
        )
        gone = save(e, "fact", "Locker code purgedword")
        e.dispatch("memory.purge", {"id": gone, "reason": "forget it"}, owner, grant)
        retire = {"id": b, "reason": "no longer", "status": "stale"}
        e.dispatch("memory.retire", retire, owner, grant)
        note = {"source": "telegram", "external_id": "m1", "author": "owner", "text": "remind me"}
        e.dispatch("observation.record", note, owner, grant)
    store.conn.execute(
        "INSERT INTO observations (source, external_id, author, text, received_at) VALUES "
        "('slack:T1', 'C1/1', 'dana', 'Can you send the deck by Friday?', "
        "'2026-11-30T09:00:00Z')"
    )
    store.conn.execute(
        "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
        "VALUES (2, 'C1', 'channel:slack', '{}')"
    )
    print("version", store.schema_version)
