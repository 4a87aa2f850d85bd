"""The action registry: one registration per verb, and the typed path in-process
callers take (``parse_input`` + ``Engine.mutate`` -> ``Receipt``) is the wire path
(``Engine.dispatch`` -> dict) with the same checks, the same writer and the same
receipt."""

from __future__ import annotations

import pytest

from mama_core.memory import CATALOG, Engine, InvalidInputError, NotGrantedError, Receipt
from mama_core.memory.catalog import AGENT_ACTIONS, OWNER_ONLY_ACTIONS
from mama_core.memory.dispatcher import REGISTRY, parse_input
from mama_core.memory.inputs import (
    ApproveInput,
    RetireInput,
    SaveInput,
    SearchInput,
    TombstoneInput,
)
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save


def test_every_verb_is_one_registration_with_a_handler_of_its_kind() -> None:
    assert list(CATALOG.actions) == list(REGISTRY)
    models = [spec.input_model for spec in REGISTRY.values()]
    assert len(set(models)) == len(models)  # each input model names one action
    for name, spec in REGISTRY.items():
        assert spec.name == name
        if spec.mutates:
            assert spec.build is not None and spec.query is None, name
        else:
            assert spec.query is not None and spec.build is None, name
    assert not AGENT_ACTIONS & OWNER_ONLY_ACTIONS
    assert "observation.record" not in AGENT_ACTIONS  # registered for_agents=False
    assert "memory.save" in AGENT_ACTIONS  # positive control


def test_a_typed_mutation_returns_the_receipt_dispatch_would(engine: Engine) -> None:
    receipt = engine.mutate(
        parse_input(SaveInput, kind="fact", summary="Kestrels hover", command_id="typed-1"),
        OWNER,
        OWNER_GRANT,
    )
    assert isinstance(receipt, Receipt)
    assert receipt.action == "memory.save" and receipt.status == "active"
    assert not receipt.replayed and receipt.judgment_id in receipt.touched
    # The same command through the wire path replays the same receipt.
    wire = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "Kestrels hover", "command_id": "typed-1"},
        OWNER,
        OWNER_GRANT,
    )
    assert wire["replayed"] is True
    assert Receipt.from_wire(wire).to_wire() == wire
    assert {**receipt.to_wire(), "replayed": True} == wire

    retired = engine.mutate(
        parse_input(RetireInput, id=receipt.judgment_id, reason="moved on", forbid_resave=True),
        OWNER,
        OWNER_GRANT,
    )
    assert retired.status == "stale" and retired.tombstone_id is not None
    assert retired.to_wire()["tombstone_id"] == retired.tombstone_id


def test_the_typed_path_refuses_as_the_wire_path_does(engine: Engine) -> None:
    target = save(engine, "Owls hunt at night")["judgment_id"]
    with pytest.raises(InvalidInputError) as bad:
        parse_input(SaveInput, kind="fact", summary="   ")
    assert bad.value.details["fields"] == ["summary"]
    assert "memory.save" in bad.value.message

    grant = agent_grant()
    with pytest.raises(NotGrantedError):  # owner-only, whatever the path
        engine.mutate(parse_input(TombstoneInput, id=target, reason="no"), AGENT, grant)
    with pytest.raises(NotGrantedError):
        engine.mutate(parse_input(ApproveInput, id=target), AGENT, grant)
    # Positive control: the same agent and grant may save through the typed path.
    saved = engine.mutate(parse_input(SaveInput, kind="fact", summary="Owls nest"), AGENT, grant)
    assert saved.status == "active"
    found = engine.read(parse_input(SearchInput, query="owls"), AGENT, grant)
    assert saved.judgment_id in [r["id"] for r in found["results"]]
