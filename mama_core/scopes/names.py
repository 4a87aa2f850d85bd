"""Scope names: ``global``, ``user:NAME``, ``channel:NAME`` or ``project:NAME``.

Kept apart from ``mama_core.memory`` so the settings and the command line can
check a name without loading the engine. A name holds no whitespace, control,
bidi override or zero-width character: two scopes that look the same on screen
must be the same scope.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from mama_core.invisible import describe, hidden_char

GLOBAL = "global"
_SCOPE = re.compile(r"global|(?:user|channel|project):[^\s\x00-\x1f\x7f]{1,200}")


def is_scope_name(name: str) -> bool:
    """Whether ``name`` is a well-formed scope name."""
    return bool(_SCOPE.fullmatch(name)) and hidden_char(name) is None


def check_scope_name(name: str) -> str:
    """Return ``name`` if well-formed, else raise ValueError (pydantic reports it)."""
    if _SCOPE.fullmatch(name):
        hidden = hidden_char(name)
        if hidden is None:
            return name
        raise ValueError(
            f"a scope name cannot hold invisible or direction-changing characters "
            f"({describe(hidden)})"
        )
    raise ValueError("a scope is 'global', 'user:NAME', 'channel:NAME' or 'project:NAME'")


ScopeName = Annotated[str, AfterValidator(check_scope_name)]
"""A validated scope name, for action inputs and settings."""
