"""The one error the embedding engine raises to the rest of MAMA.

llama.cpp, the GGUF reader and the converter fail in their own ways (ValueError,
RuntimeError, OSError); they are translated into ``ModelError`` where they enter,
so a person sees one sentence naming the file and what to do, never a traceback.
"""

from __future__ import annotations

from mama_core.errors import ModelUnavailableError


class ModelError(ModelUnavailableError):
    """The embedding model cannot be built, found or loaded."""
