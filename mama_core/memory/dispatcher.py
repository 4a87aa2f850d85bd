"""The action registry and dispatcher: from an action name and a raw payload to a
validated, permitted, scanned call, and to the handler registered for it.

Every verb is ONE registration: ``@mutation`` or ``@query`` on its handler, naming the
action, its pydantic input model, who may use it and its description. The handler
is typed on its input model (``Call[SaveInput]``), so it never re-checks the type.

The order of checks is: the action exists (``unknown_action``), the grant holds it
(``not_granted``; owner-only verbs also need the owner as actor), the payload
fits the schema (``invalid_input`` with field paths, never the values), nothing
only the owner may ask for is asked by anyone else (``ownership.check_call``), and a
mutation's strings carry no secret shapes (``secret_refused``). A mutation also
gets its command id and the hash of its canonical payload here.
"""

from __future__ import annotations

import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from mama_core.action_registry import ACTIONS, ActionRegistry
from mama_core.canonical import canonical_hash
from mama_core.embeddings.base import MINILM_SCALE
from mama_core.errors import InvalidInputError, NotGrantedError, UnknownActionError
from mama_core.json_types import JsonObject
from mama_core.memory import ownership
from mama_core.memory.config import EngineConfig
from mama_core.memory.restatements import NearRecords
from mama_core.memory.results import ActionResult
from mama_core.memory.secrets_scan import find_secret, refuse_secrets
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.recall import Recall
from mama_core.scopes.grants import Grant
from mama_core.session import SessionFacts
from mama_core.store.connection import Connection

InputT = TypeVar("InputT", bound=BaseModel)


@dataclass(frozen=True)
class Call(Generic[InputT]):
    """An action call after validation: its input, caller and idempotency key."""

    spec: ActionSpec[Any]
    input: InputT
    session: SessionFacts
    grant: Grant
    command_id: str = ""
    payload_hash: str = ""
    replay_known: bool = False
    """A receipt for ``command_id`` already exists: skip costly preparation."""


class ReplyReader(Protocol):
    """The app's read of what MAMA sent back: the observations of the replies and notices
    delivered for the inputs whose observations are ``input_observation_ids``. The core
    calls it (``memory.quotes``) and never names the runtime's tables itself."""

    def __call__(self, conn: Connection, input_observation_ids: Sequence[int], /) -> list[int]: ...


def no_replies(conn: Connection, input_observation_ids: Sequence[int], /) -> list[int]:
    """The ``ReplyReader`` of an engine without the app's runtime: nothing was sent back."""
    return []


@dataclass(frozen=True)
class Env:
    """What handlers need from the engine: settings, the embedding model and recall."""

    config: EngineConfig
    model_id: str
    embed: Callable[[str], np.ndarray]
    recall: Callable[[], Recall]
    """Hybrid recall, made on first use (loading the vector cache costs time)."""
    tombstone_threshold: float = MINILM_SCALE.duplicate_threshold
    """The tombstone cosine in force: the config's, else the model's (``ScoreScale``)."""
    swap_same_meaning: float = 0.0
    """The model's ``ScoreScale.swap_same_meaning`` (the tombstone matcher's swap cue)."""
    restatement_threshold: float = MINILM_SCALE.restatement_threshold
    """The model's ``ScoreScale.restatement_threshold``: a save this close to a live
    memory (and not told apart by its words) restates it (``restatements``)."""
    check_restatements: bool = True
    """``EngineConfig.check_restatements``."""
    near: NearRecords | None = None
    """Where a save finds the records it may restate from memory (the vector cache and
    the open transaction's saves); None, or no cache loaded: it reads them instead."""
    replies: ReplyReader = no_replies
    """The app's read of what was sent back for an input (``Engine``'s ``replies``)."""


MutationHandler = Callable[[Call[InputT], Env], Command]
"""A mutation's handler: prepares (outside the transaction) the writer command."""
ReadHandler = Callable[[Connection, Call[InputT], Env], ActionResult]
"""A read's handler: runs on a pooled read connection and returns the result (its
result model, or for reads not yet given one, the wire dict)."""


@dataclass(frozen=True)
class ActionSpec(Generic[InputT]):
    """One registered action: its input model, who may use it, and its handler."""

    name: str
    input_model: type[InputT]
    owner_only: bool
    mutates: bool
    description: str
    scan_secrets: bool = True
    """Mutations whose strings are refused when secret-shaped (all but raw observations)."""
    for_agents: bool = True
    """In an agent's grant by default (never when ``owner_only``)."""
    build: MutationHandler[InputT] | None = None
    """A mutation's handler (``mutates``)."""
    query: ReadHandler[InputT] | None = None
    """A read's handler (not ``mutates``)."""
    result_model: type[ActionResult] | None = None
    """A read's result model (its handler's return annotation), also its tool's output
    schema; None for a mutation (a receipt)."""

    def command(self, call: Call[Any], env: Env) -> Command:
        """The writer command for ``call`` of this mutation."""
        if self.build is None:
            raise TypeError(f"{self.name} is a read, not a mutation")
        return self.build(call, env)

    def run_read(self, conn: Connection, call: Call[Any], env: Env) -> JsonObject:
        """The result of ``call`` of this read on ``conn``, in its wire form."""
        return self.run_read_result(conn, call, env).to_wire()

    def run_read_result(self, conn: Connection, call: Call[Any], env: Env) -> ActionResult:
        """The result of ``call`` of this read on ``conn``, as its handler returned it."""
        if self.query is None:
            raise TypeError(f"{self.name} is a mutation, not a read")
        return self.query(conn, call, env)


REGISTRY: ActionRegistry[ActionSpec[Any]] = ACTIONS
"""Every registered action by name, in registration order (the catalog's order): the
one registry (``mama_core.action_registry.ACTIONS``), typed with this module's spec."""


def mutation(
    name: str,
    model: type[InputT],
    *,
    description: str,
    owner_only: bool = False,
    scan_secrets: bool = True,
    for_agents: bool = True,
) -> Callable[[MutationHandler[InputT]], MutationHandler[InputT]]:
    """Register the decorated function as the handler of mutating action ``name``."""

    def register(handler: MutationHandler[InputT]) -> MutationHandler[InputT]:
        REGISTRY.register(
            ActionSpec(
                name,
                model,
                owner_only=owner_only,
                mutates=True,
                description=description,
                scan_secrets=scan_secrets,
                for_agents=for_agents and not owner_only,
                build=handler,
            )
        )
        return handler

    return register


def _result_model(handler: Callable[..., object]) -> type[ActionResult] | None:
    """The result model a read handler's return annotation names, if it names one."""
    returned = typing.get_type_hints(handler).get("return")
    if isinstance(returned, type) and issubclass(returned, ActionResult):
        return returned
    return None


ResultT = TypeVar("ResultT", bound=ActionResult)


def query(
    name: str, model: type[InputT], *, description: str, owner_only: bool = False
) -> Callable[
    [Callable[[Connection, Call[InputT], Env], ResultT]],
    Callable[[Connection, Call[InputT], Env], ResultT],
]:
    """Register the decorated function as the handler of read action ``name``; a
    result model in its return annotation is the action's (``ActionSpec.result_model``)."""

    def register(
        handler: Callable[[Connection, Call[InputT], Env], ResultT],
    ) -> Callable[[Connection, Call[InputT], Env], ResultT]:
        REGISTRY.register(
            ActionSpec(
                name,
                model,
                owner_only=owner_only,
                mutates=False,
                description=description,
                for_agents=not owner_only,
                query=handler,
                result_model=_result_model(handler),
            )
        )
        return handler

    return register


def spec_for_input(model: BaseModel) -> ActionSpec[Any]:
    """The action whose input ``model`` is (each input model belongs to one action)."""
    return spec_for_input_type(type(model))


def parse_input(model: type[InputT], /, **fields: Any) -> InputT:
    """``model`` from ``fields`` for an in-process caller, refused exactly as ``dispatch``
    would refuse the same payload (``invalid_input`` naming the fields, never a
    pydantic error)."""
    return validate(spec_for_input_type(model), fields)


def spec_for_input_type(model: type[InputT]) -> ActionSpec[InputT]:
    """The action that takes input model ``model``."""
    spec: ActionSpec[InputT] | None = REGISTRY.for_input(model)
    if spec is None:
        raise UnknownActionError(
            f"No action takes {model.__name__}.", details={"input": model.__name__}
        )
    return spec


def command_for(
    call: Call[Any],
    apply: Callable[[Tx], Applied],
    after_commit: Callable[[Connection], JsonObject | None] | None = None,
) -> Command:
    """The writer command that carries out ``call`` with ``apply``."""
    return Command(
        action=call.spec.name,
        command_id=call.command_id,
        payload_hash=call.payload_hash,
        session=call.session,
        grant=call.grant,
        apply=apply,
        after_commit=after_commit,
    )


class ActionTable(Protocol):
    """Anything that names its actions (the ``Catalog``)."""

    @property
    def actions(self) -> Mapping[str, ActionSpec[Any]]: ...


def prepare_call(
    catalog: ActionTable,
    action: str,
    payload: Mapping[str, Any],
    session: SessionFacts,
    grant: Grant,
) -> Call[Any]:
    """Check and validate one call; raise the engine error that refuses it."""
    spec = catalog.actions.get(action)
    if spec is None:
        raise UnknownActionError(f"There is no action {action!r}.", details={"action": action})
    _permit(spec, session, grant)
    return _admit(spec, validate(spec, payload), session, grant)


def prepare_input(
    catalog: ActionTable, model: BaseModel, session: SessionFacts, grant: Grant
) -> Call[Any]:
    """``prepare_call`` for an input model an in-process caller built itself (its
    action is the one that takes that model); the same checks, in the same order."""
    spec = spec_for_input(model)
    if catalog.actions.get(spec.name) is not spec:
        raise UnknownActionError(
            f"There is no action {spec.name!r}.", details={"action": spec.name}
        )
    _permit(spec, session, grant)
    return _admit(spec, model, session, grant)


def _permit(spec: ActionSpec[Any], session: SessionFacts, grant: Grant) -> None:
    if spec.name not in grant.actions:
        raise NotGrantedError(
            f"This caller is not granted {spec.name}.", details={"action": spec.name}
        )
    if spec.owner_only and not session.is_owner:
        raise NotGrantedError(f"{spec.name} is the owner's alone.", details={"action": spec.name})


def _admit(
    spec: ActionSpec[Any], model: BaseModel, session: SessionFacts, grant: Grant
) -> Call[Any]:
    ownership.check_call(spec.name, model, session)
    if not spec.mutates:
        return Call(spec, model, session, grant)
    data = model.model_dump(mode="json")
    command_id = data.pop("command_id", None) or uuid.uuid4().hex
    if spec.scan_secrets:
        refuse_secrets(data)
    return Call(spec, model, session, grant, command_id, canonical_hash(data))


def validate(spec: ActionSpec[InputT], payload: Mapping[str, Any]) -> InputT:
    """The action's input model from ``payload``, or ``invalid_input`` naming the fields."""
    if not isinstance(payload, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidInputError(
            f"The input of {spec.name} must be an object.", details={"errors": []}
        )
    try:
        return spec.input_model.model_validate(dict(payload))
    except ValidationError as exc:
        errors = [
            {"field": _field_path(err["loc"]), "message": err["msg"], "type": err["type"]}
            for err in exc.errors(include_url=False, include_context=False, include_input=False)
        ]
        listed = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise InvalidInputError(
            f"Invalid input for {spec.name}: {listed}.",
            details={"errors": errors, "fields": [e["field"] for e in errors]},
        ) from None


def _field_path(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        text = str(part)
        parts.append("<key>" if find_secret(text) else text)
    return ".".join(parts) or "(input)"
