"""dispatch_batch: many saves in one transaction, each with its own event and
receipt, and all or nothing."""

from __future__ import annotations

import pytest

from mama_core.errors import InvalidInputError, SecretRefusedError
from mama_core.memory import Engine
from mama_core.memory.verify import verify_store
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, event_count, search_ids


def payloads(*summaries: str) -> list[dict[str, object]]:
    return [{"kind": "fact", "summary": s, "scopes": ["project:import"]} for s in summaries]


def test_batch_writes_each_record_with_its_own_event(engine: Engine) -> None:
    before = event_count(engine)
    receipts = engine.dispatch_batch(
        "memory.save",
        payloads("Kestrel owns billing", "Osprey owns search", "Harrier owns deploys"),
        OWNER,
        OWNER_GRANT,
    )
    assert [r["status"] for r in receipts] == ["active"] * 3
    assert len({r["event_id"] for r in receipts}) == 3
    assert event_count(engine) == before + 3
    assert search_ids(engine, "who owns search")[0] == receipts[1]["judgment_id"]
    reader = engine.store.new_connection()
    try:
        assert verify_store(reader, engine.store.secret).ok
    finally:
        reader.close()


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"kind": "fact", "summary": ""}, InvalidInputError),
        ({"kind": "fact", "summary": "key AKIAIOSFODNN7EXAMPLE is ours"}, SecretRefusedError),
    ],
)
def test_one_refused_payload_writes_nothing(
    engine: Engine, bad: dict[str, object], error: type[Exception]
) -> None:
    before = event_count(engine)
    batch = [*payloads("Merlin owns payroll"), bad, *payloads("Hobby owns docs")]
    with pytest.raises(error) as info:
        engine.dispatch_batch("memory.save", batch, OWNER, OWNER_GRANT)
    assert getattr(info.value, "details", {}).get("index") == 1
    assert event_count(engine) == before
    assert search_ids(engine, "Merlin payroll") == []
    # Positive control: the same batch without the refused payload is written.
    receipts = engine.dispatch_batch("memory.save", [batch[0], batch[2]], OWNER, OWNER_GRANT)
    assert search_ids(engine, "Merlin payroll")[0] == receipts[0]["judgment_id"]
    assert event_count(engine) == before + 2


def test_reads_cannot_be_batched(engine: Engine) -> None:
    with pytest.raises(Exception, match="only mutations"):
        engine.dispatch_batch("memory.search", [{"query": "x"}], OWNER, OWNER_GRANT)
