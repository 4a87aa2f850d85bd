"""The prompts shipped in ``resources/prompts``, found in a checkout or a bundle."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mama_core.errors import MamaError


class PromptMissingError(MamaError):
    code = "prompt_missing"
    exit_code = 3


def resources_dir() -> Path:
    """``MAMA_RESOURCES``, the PyInstaller bundle's folder, or the checkout's."""
    env = os.environ.get("MAMA_RESOURCES")
    if env:
        return Path(env)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def load_prompt(name: str = "owner_system") -> str:
    """The text of ``resources/prompts/<name>.md``."""
    path = resources_dir() / "prompts" / f"{name}.md"
    try:
        return path.read_text("utf-8").strip()
    except OSError as exc:
        raise PromptMissingError(f"The prompt file {path} is missing; reinstall MAMA.") from exc
