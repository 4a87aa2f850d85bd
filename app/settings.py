"""The owner's settings, kept as JSON in the data folder.

Secrets (the database key, the Telegram token) never live here: they stay in
the OS keyring or the environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mama_core.errors import MamaError


class SettingsError(MamaError):
    code = "invalid_settings"
    exit_code = 3


class Settings(BaseModel):
    """What the owner can change; defaults are what a new owner gets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    embedding_model_path: Path | None = Field(
        default=None, description="A GGUF embedding model; empty means the built-in MiniLM."
    )
    tombstone_threshold: float = Field(default=0.92, ge=0.5, le=1.0)
    guidance_budget_tokens: int = Field(default=1500, ge=100, le=100_000)
    agent_backend: str = Field(default="command")
    local_model_path: Path | None = Field(
        default=None, description="The GGUF chat model of the local agent backend."
    )

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read ``path`` (missing file → defaults), then apply env overrides."""
        data: dict[str, object] = {}
        if path.exists():
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise SettingsError(
                    f"The settings file {path} cannot be read ({exc}); fix or delete it."
                ) from exc
        if env_model := os.environ.get("MAMA_EMBEDDING_MODEL"):
            data["embedding_model_path"] = env_model
        if env_chat := os.environ.get("MAMA_LOCAL_MODEL"):
            data["local_model_path"] = env_chat
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "settings"
            raise SettingsError(
                f"The settings file {path} has a bad value for {where}: {first['msg']}; "
                "fix or delete it."
            ) from exc

    def save(self, path: Path) -> None:
        """Write atomically, so a crash never leaves half a settings file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(self.model_dump_json(indent=2, exclude_defaults=True), "utf-8")
        os.replace(tmp, path)
