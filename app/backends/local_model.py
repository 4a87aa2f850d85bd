"""A local GGUF chat model through llama-cpp-python, for owners who want no cloud model.

The model file is a setting (``MAMA_LOCAL_MODEL``). Each turn sends the
conversation with our actions as OpenAI-style ``tools`` to
``create_chat_completion``; tool calls the model makes are run through the
turn's toolbox and their results fed back, for a bounded number of rounds.
The default chat format is llama.cpp's ``chatml-function-calling``; a model
whose GGUF carries a tool-aware template may be given another one.

Status: written against llama-cpp-python 0.3.36's documented API, but not yet
exercised against a real chat model in the tests (none ships in a package we
install); only the "no model configured" path is tested.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from app.backends.base import BackendError, BackendUnavailableError, TurnReply, TurnRequest
from app.backends.tools import ToolBox, ToolSpec

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 6
HISTORY_MESSAGES = 40


class LocalModelBackend:
    """A conversation with a GGUF chat model running in this process."""

    name = "local-gguf"

    def __init__(
        self,
        model_path: Path | None,
        system_prompt: str,
        *,
        chat_format: str = "chatml-function-calling",
        n_ctx: int = 8192,
    ) -> None:
        self.model_path = model_path
        self.system_prompt = system_prompt
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        self._llm: Any = None
        self._tools: list[dict[str, Any]] = []
        self._history: list[dict[str, Any]] = []
        self._version: str | None = None

    @property
    def version(self) -> str | None:
        return self._version

    @property
    def wants_session_context(self) -> bool:
        return not self._history

    async def start(self, tools: list[ToolSpec]) -> None:
        if self.model_path is None:
            raise BackendUnavailableError(
                "No local chat model is configured: set MAMA_LOCAL_MODEL to a GGUF chat model "
                "file, or choose another agent backend. Until then I answer commands only."
            )
        if not self.model_path.is_file():
            raise BackendUnavailableError(
                f"The local chat model {self.model_path} does not exist; check the setting."
            )
        self._tools = [
            {
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.input_schema,
                },
            }
            for s in tools
        ]
        self._llm = await asyncio.to_thread(self._load)

    def _load(self) -> Any:
        try:
            import llama_cpp
        except ImportError as exc:
            raise BackendUnavailableError("llama-cpp-python is not installed.") from exc
        self._version = f"llama-cpp-python {llama_cpp.__version__}"
        try:
            return llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                chat_format=self.chat_format,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendUnavailableError(
                f"The local chat model {self.model_path} could not be loaded: {exc}"
            ) from exc

    async def close(self) -> None:
        self._llm = None

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        if self._llm is None:
            raise BackendError("The local model is not loaded.")
        turn: list[dict[str, Any]] = [{"role": "user", "content": request.prompt}]
        for _ in range(MAX_TOOL_ROUNDS):
            message = await asyncio.to_thread(self._complete, turn)
            turn.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                self._remember(turn)
                return TurnReply(str(message.get("content") or ""))
            for call in calls:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    arguments = None
                outcome = await tools.call(str(function.get("name", "")), arguments)
                turn.append(
                    {"role": "tool", "tool_call_id": call.get("id"), "content": outcome.text}
                )
        self._remember(turn)
        raise BackendError("The local model kept calling tools without answering.")

    def _complete(self, turn: list[dict[str, Any]]) -> dict[str, Any]:
        messages = [{"role": "system", "content": self.system_prompt}, *self._history, *turn]
        try:
            response = self._llm.create_chat_completion(
                messages=messages, tools=self._tools, tool_choice="auto"
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"The local model failed: {exc}") from exc
        return dict(response["choices"][0]["message"])

    def _remember(self, turn: list[dict[str, Any]]) -> None:
        self._history = [*self._history, *turn][-HISTORY_MESSAGES:]
