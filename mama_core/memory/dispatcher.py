"""From an action name and a raw payload to a validated, permitted, scanned call.

The order is: the action exists (``unknown_action``), the grant holds it
(``not_granted``; owner-only verbs also need the owner as actor), the payload
fits the schema (``invalid_input`` with field paths, never the values), nothing
only the owner may ask for is asked by anyone else (``ownership.check_call``), and a
mutation's strings carry no secret shapes (``secret_refused``). A mutation also
gets its command id and the hash of its canonical payload here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from mama_core.memory import ownership
from mama_core.memory.calls import Call
from mama_core.memory.canonical import canonical_hash
from mama_core.memory.catalog import ActionSpec, Catalog
from mama_core.memory.errors import InvalidInputError, NotGrantedError, UnknownActionError
from mama_core.memory.grants import Grant
from mama_core.memory.secrets_scan import find_secret, refuse_secrets
from mama_core.memory.session import SessionFacts


def prepare_call(
    catalog: Catalog,
    action: str,
    payload: Mapping[str, Any],
    session: SessionFacts,
    grant: Grant,
) -> Call:
    """Check and validate one call; raise the engine error that refuses it."""
    spec = catalog.actions.get(action)
    if spec is None:
        raise UnknownActionError(f"There is no action {action!r}.", details={"action": action})
    if action not in grant.actions:
        raise NotGrantedError(f"This caller is not granted {action}.", details={"action": action})
    if spec.owner_only and not session.is_owner:
        raise NotGrantedError(f"{action} is the owner's alone.", details={"action": action})
    model = validate(spec, payload)
    ownership.check_call(spec, model, session)
    if not spec.mutates:
        return Call(spec, model, session, grant)
    data = model.model_dump(mode="json")
    command_id = data.pop("command_id", None) or uuid.uuid4().hex
    if spec.scan_secrets:
        refuse_secrets(data)
    return Call(spec, model, session, grant, command_id, canonical_hash(data))


def validate(spec: ActionSpec, payload: Mapping[str, Any]) -> BaseModel:
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
