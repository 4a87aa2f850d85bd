"""The one name for a JSON object whose fields this code does not fix.

``JsonObject`` is for values that really are free-form JSON: an action's payload
before its input model validates it, a stored JSON column (provenance, an event's
payload, a setting's value), a JSON Schema document, and the wire form a typed
result or receipt is turned into at the edge. A record with known fields gets its
own model or dataclass instead.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A decoded JSON object (``json.loads`` of an object, or what ``json.dumps`` takes)."""
