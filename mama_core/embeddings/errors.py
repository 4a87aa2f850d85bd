"""The one error the embedding engine raises to the rest of MAMA.

llama.cpp, the GGUF reader and the converter fail in their own ways (ValueError,
RuntimeError, OSError); they are translated into ``ModelError`` where they enter,
so a person sees one sentence naming the file and what to do, never a traceback.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ModelError(Exception):
    """The embedding model cannot be built, found or loaded."""

    code: ClassVar[str] = "model_unavailable"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message
