"""The owner's settings, kept as JSON in the data folder.

Secrets (the database key, the Telegram token) never live here: they stay in
the OS keyring or the environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from mama_core.embeddings.convert import BUILTIN_MODELS, DEFAULT_EMBEDDING_MODEL
from mama_core.errors import MamaError
from mama_core.scopes.names import ScopeName


class SettingsError(MamaError):
    code = "invalid_settings"
    exit_code = 3


ENV_OVERRIDES = {
    "embedding_model_path": "MAMA_EMBEDDING_MODEL",
    "local_model_path": "MAMA_LOCAL_MODEL",
}
"""Settings an environment variable overrides (for servers and tests)."""


def _builtin_model(name: str) -> str:
    if name not in BUILTIN_MODELS:
        raise ValueError(f"choose one of {', '.join(BUILTIN_MODELS)}")
    return name


BuiltinModel = Annotated[str, AfterValidator(_builtin_model)]
"""A built-in embedding model's name (``BUILTIN_MODELS``)."""


ConnectorName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$")]
"""A connector's name: lower-case letters, digits, ``-`` and ``_`` (it names its secrets)."""


class ConnectorConfig(BaseModel):
    """One connector the owner set up (its secrets live in the keyring, not here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ConnectorName
    kind: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    enabled: bool = True
    interval_s: float = Field(default=60.0, ge=1.0, le=86_400.0)
    options: dict[str, Any] = Field(default_factory=dict[str, Any])


class Settings(BaseModel):
    """What the owner can change; defaults are what a new owner gets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    embedding_model: BuiltinModel = Field(
        default=DEFAULT_EMBEDDING_MODEL,
        description="The built-in embedding model: multilingual-e5-small (any language) "
        "or all-MiniLM-L6-v2 (English only). A configured file replaces it.",
    )
    embedding_model_path: Path | None = Field(
        default=None, description="A GGUF embedding model file; empty means the built-in one."
    )
    tombstone_threshold: float | None = Field(
        default=None,
        ge=0.5,
        le=1.0,
        description="Cosine at which a save is a tombstoned text reworded; empty: the "
        "embedding model's own (each model has its own scale).",
    )
    guidance_budget_tokens: int = Field(default=1500, ge=100, le=100_000)
    agent_backend: str = Field(default="command")
    local_model_path: Path | None = Field(
        default=None, description="The GGUF chat model of the local agent backend."
    )
    agent_scopes: tuple[ScopeName, ...] = Field(
        default=("global",),
        min_length=1,
        max_length=50,
        description="Where the owner's agent may read and save; the first is where saves go.",
    )
    connectors: tuple[ConnectorConfig, ...] = Field(
        default=(), description="The sources MAMA reads (Slack, mail, Trello), polled in turn."
    )

    @model_validator(mode="after")
    def _unique_connector_names(self) -> Settings:
        names = [c.name for c in self.connectors]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"connector names must be unique: {', '.join(twice)}")
        return self

    def connector(self, name: str) -> ConnectorConfig | None:
        return next((c for c in self.connectors if c.name == name), None)

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
        for field, variable in ENV_OVERRIDES.items():
            if value := os.environ.get(variable):
                data[field] = value
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
        """Write atomically, so a crash never leaves half a settings file.

        A value that only came from an environment override is not written: the
        file keeps what it had, so the override ends when the variable goes."""
        data: dict[str, object] = json.loads(self.model_dump_json(exclude_defaults=True))
        on_disk = _read_quietly(path)
        for field, variable in ENV_OVERRIDES.items():
            value = os.environ.get(variable)
            if value and getattr(self, field) == Path(value):
                if field in on_disk:
                    data[field] = on_disk[field]
                else:
                    data.pop(field, None)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2), "utf-8")
        os.replace(tmp, path)


def _read_quietly(path: Path) -> dict[str, object]:
    """The settings file's JSON object, or {} if there is none (or it is unreadable)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
