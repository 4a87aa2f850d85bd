"""The action registry: one registration per verb, and the typed path in-process
callers take (``parse_input`` + ``Engine.mutate`` -> ``Receipt``) is the wire path
(``Engine.dispatch`` -> dict) with the same checks, the same writer and the same
receipt."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from mama_core.action_registry import ACTIONS, ActionRegistry
from mama_core.memory import CATALOG, Engine, InvalidInputError, NotGrantedError, Receipt
from mama_core.memory.catalog import AGENT_ACTIONS, OWNER_ONLY_ACTIONS
from mama_core.memory.dispatcher import REGISTRY, ActionSpec, parse_input
from mama_core.memory.inputs import (
    ApproveInput,
    RetireInput,
    SaveInput,
    SearchInput,
    TombstoneInput,
)
from mama_core.scopes.grants import Grant
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


def test_grants_the_catalog_and_the_dispatcher_read_one_registry() -> None:
    assert REGISTRY is ACTIONS
    assert len(REGISTRY) > 20 and "memory.save" in REGISTRY.names()  # the control: it was read
    assert Grant.owner().actions == REGISTRY.all_actions() == frozenset(CATALOG.actions)
    assert Grant.agent(["user:ana"]).actions == REGISTRY.agent_actions() == AGENT_ACTIONS
    assert REGISTRY.owner_only_actions() == OWNER_ONLY_ACTIONS
    assert REGISTRY.spec("memory.save").input_model is SaveInput
    assert REGISTRY.for_input(SaveInput) is REGISTRY.spec("memory.save")


class _First(BaseModel):
    pass


class _Second(BaseModel):
    pass


def _spec(name: str, model: type[BaseModel], *, owner_only: bool) -> ActionSpec[Any]:
    return ActionSpec(
        name, model, owner_only=owner_only, mutates=False, description=name, for_agents=True
    )


def test_a_registry_takes_each_name_and_model_once_and_keeps_owner_verbs_from_agents() -> None:
    registry: ActionRegistry[ActionSpec[Any]] = ActionRegistry()
    shared = _spec("x.shared", _First, owner_only=False)
    owners = _spec("x.owners", _Second, owner_only=True)  # for_agents=True, yet owner-only
    registry.register(shared)
    registry.register(owners)
    assert registry.names() == ("x.shared", "x.owners")
    assert registry.spec("x.owners") is owners and registry.for_input(_First) is shared
    assert registry.agent_actions() == {"x.shared"}  # the positive control beside the refusal
    assert registry.owner_only_actions() == {"x.owners"}
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_spec("x.shared", _Second, owner_only=False))
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_spec("x.other", _First, owner_only=False))
    assert len(registry) == 2 and "x.other" not in registry


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


def test_the_wire_receipt_keeps_its_key_order_and_the_stored_json(engine: Engine) -> None:
    """The writer builds the typed receipt; its wire form is the dict the writer used to
    build (common fields, the verb's own, ``replayed``, then the post-commit step's),
    the stored JSON is that dict sorted, and a replay hands back the stored one."""
    payload = {"kind": "fact", "summary": "Ospreys dive", "command_id": "order-1"}
    first = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)
    common = ["command_id", "action", "event_id", "at", "judgment_id", "status", "touched"]
    assert list(first) == [*common, "replayed"]
    (stored,) = engine.store.conn.execute(
        "SELECT receipt FROM receipts WHERE command_id = 'order-1'"
    ).fetchone()
    assert stored == json.dumps(first, sort_keys=True)
    again = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)
    assert list(again) == sorted(again)  # the stored JSON's order, as before
    assert again == {**first, "replayed": True}
    assert json.dumps(again) == json.dumps({**json.loads(stored), "replayed": True})

    purged = engine.dispatch(
        "memory.purge", {"id": first["judgment_id"], "reason": "typo"}, OWNER, OWNER_GRANT
    )
    keys = list(purged)
    assert keys[: len(common)] == common
    after = keys[keys.index("replayed") + 1 :]
    assert after == ["backups_removed", "backups_not_removed", "wal", "purge_pending"]
    assert keys[len(common) : keys.index("replayed")] == ["purged", "observations_purged"]
    typed = Receipt.from_wire(purged)
    assert typed.wal == purged["wal"] and typed.get("purge_pending") is purged["purge_pending"]


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
