"""Scope names: ``global``, ``user:NAME``, ``channel:NAME`` or ``project:NAME``.

Kept apart from ``mama_core.memory`` so the settings and the command line can
check a name without loading the engine.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

GLOBAL = "global"
_SCOPE = re.compile(r"global|(?:user|channel|project):[^\s\x00-\x1f\x7f]{1,200}")


def is_scope_name(name: str) -> bool:
    """Whether ``name`` is a well-formed scope name."""
    return bool(_SCOPE.fullmatch(name))


def check_scope_name(name: str) -> str:
    """Return ``name`` if well-formed, else raise ValueError (pydantic reports it)."""
    if not is_scope_name(name):
        raise ValueError("a scope is 'global', 'user:NAME', 'channel:NAME' or 'project:NAME'")
    return name


ScopeName = Annotated[str, AfterValidator(check_scope_name)]
"""A validated scope name, for action inputs and settings."""
