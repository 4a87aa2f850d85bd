"""A local GGUF chat model through llama-cpp-python, for owners who want no cloud model.

The model file is a setting (``local_model_path``; ``MAMA_LOCAL_MODEL``
overrides it). llama-cpp-python's own tool-calling chat format
(``chatml-function-calling``, 0.3.36) cannot carry a conversation: it drops
tool results from the prompt and only lets the model answer with another call
or an empty message. So this backend speaks a small
protocol of its own, which any instruction-following model can follow and a
grammar enforces:

* the conversation is rendered with the model's own chat template (from the
  GGUF; llama.cpp's fallback when there is none), the tools and the protocol
  described in the system message;
* every answer is one JSON object — ``{"reply": "…"}`` for the owner, or
  ``{"call": "<tool>", "arguments": {…}}`` — sampled under a grammar built
  from the tools' JSON schemas, so it always parses and always names a real
  tool with arguments of the right shape (the dispatcher still validates);
* a tool's result goes back as a user-side message, so every chat template's
  user/assistant alternation holds.

Sampling is greedy by default (temperature 0): the same message in the same
state makes the same decision, which is what an owner reviewing an agent wants.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.backends.base import BackendError, BackendUnavailableError, TurnReply, TurnRequest
from app.backends.toolbox import ToolBox, ToolSpec
from mama_core.json_types import JsonObject

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 6
HISTORY_MESSAGES = 40
ANSWER_MAX_TOKENS = 1024
MESSAGE_OVERHEAD_TOKENS = 8
"""What a chat template adds around each message (role markers, separators): counted on
top of the content's own tokens so that a history measured to fit does fit."""
HIDDEN_ARGUMENTS = ("command_id",)
"""Arguments the host fills in itself (idempotency keys): not offered to the model."""
LOOSENED = ("maxLength", "minLength", "maxItems", "minItems", "pattern", "format")
"""Schema bounds left out of the grammar (llama.cpp expands bounded repetitions into
rules and refuses large ones); ``ANSWER_MAX_TOKENS`` bounds the answer instead, and
the dispatcher checks every bound when the call arrives."""

PROTOCOL = """\
# How to answer

Answer every message with exactly one JSON object and nothing else:

- {"reply": "<your answer to the owner>"} to answer the owner, or
- {"call": "<tool name>", "arguments": {<the tool's arguments>}} to use a tool.

After a tool call you receive its result (JSON) in the next message; then call
another tool or reply. Reply once you have what you need.

# Tools
"""


class LocalModelBackend:
    """A conversation with a GGUF chat model running in this process."""

    name = "local-gguf"
    speaks_for_owner = False
    writes_briefs = True

    def __init__(
        self,
        model_path: Path | None,
        system_prompt: str,
        *,
        chat_format: str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.model_path = model_path
        self.system_prompt = system_prompt
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.temperature = temperature
        self.seed = seed
        self._llm: Any = None
        self._grammar: Any = None
        self._system = system_prompt
        self._history: list[dict[str, str]] = []
        self._token_counts: dict[str, int] = {}
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
                "No local chat model is configured: choose a GGUF chat model in Settings "
                "(or set MAMA_LOCAL_MODEL), or choose another agent backend. Until then I "
                "answer commands only."
            )
        if not self.model_path.is_file():
            raise BackendUnavailableError(
                f"The local chat model {self.model_path} does not exist; check the setting."
            )
        offered = [(spec.name, spec.description, model_schema(spec.input_schema)) for spec in tools]
        self._system = system_message(self.system_prompt, offered)
        self._llm, self._grammar = await asyncio.to_thread(self._load, answer_schema(offered))

    def _load(self, schema: JsonObject) -> tuple[Any, Any]:
        try:
            import llama_cpp
            from llama_cpp.llama_grammar import LlamaGrammar
        except ImportError as exc:
            raise BackendUnavailableError("llama-cpp-python is not installed.") from exc
        self._version = f"llama-cpp-python {llama_cpp.__version__}"
        try:
            llm = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                chat_format=self.chat_format,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendUnavailableError(
                f"The local chat model {self.model_path} could not be loaded: {exc}"
            ) from exc
        grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        return llm, grammar

    async def forget_session(self) -> list[Path]:
        """After a purge: drop the conversation held in memory (nothing is on disk),
        the token counts keyed by its texts included."""
        self._history = []
        self._token_counts = {}
        return []

    async def close(self) -> None:
        self._llm = None
        self._grammar = None

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        if self._llm is None:
            raise BackendError("The local model is not loaded.")
        turn: list[dict[str, str]] = [{"role": "user", "content": request.prompt}]
        for _ in range(MAX_TOOL_ROUNDS):
            raw = await asyncio.to_thread(self._complete, turn)
            answer = parse_answer(raw)
            turn.append({"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)})
            if "reply" in answer:
                self._remember(turn)
                return TurnReply(str(answer["reply"]))
            outcome = await tools.call(str(answer["call"]), answer.get("arguments"))
            turn.append({"role": "user", "content": f"Result of {outcome.tool}: {outcome.text}"})
        self._remember(turn)
        raise BackendError("The local model kept calling tools without answering.")

    def count_tokens(self, message: dict[str, str]) -> int:
        """The tokens ``message`` takes in the model's context (its template's included)."""
        content = message["content"]
        if content not in self._token_counts:
            tokens = self._llm.tokenize(content.encode("utf-8"), add_bos=False, special=True)
            self._token_counts[content] = len(tokens) + MESSAGE_OVERHEAD_TOKENS
        return self._token_counts[content]

    def _fit(self, turn: list[dict[str, str]]) -> None:
        """Drop the oldest history so that the system message, the history, this turn and
        the longest answer fit the context; a turn that cannot fit even alone is refused.

        A count of 40 messages was the only bound, and a few source turns of 30 items
        each filled an 8,192-token context: llama.cpp then refused every later turn."""
        room = self.n_ctx - ANSWER_MAX_TOKENS
        fixed = sum(self.count_tokens(m) for m in [{"content": self._system}, *turn])
        if fixed > room:
            raise BackendError(
                f"This turn needs about {fixed} tokens and the local model's context holds "
                f"{room} beside its answer: give the model a larger context (n_ctx) or "
                "send less at once."
            )
        self._history = fit_history(self._history, room - fixed, self.count_tokens)
        held = {self._system, *(m["content"] for m in [*self._history, *turn])}
        self._token_counts = {k: v for k, v in self._token_counts.items() if k in held}

    def _complete(self, turn: list[dict[str, str]]) -> str:
        self._fit(turn)
        messages = [{"role": "system", "content": self._system}, *self._history, *turn]
        try:
            response = self._llm.create_chat_completion(
                messages=messages,
                grammar=self._grammar,
                temperature=self.temperature,
                max_tokens=ANSWER_MAX_TOKENS,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"The local model failed: {exc}") from exc
        choice = response["choices"][0]
        if choice.get("finish_reason") == "length":
            raise BackendError(
                f"The local model's answer was cut off after {ANSWER_MAX_TOKENS} tokens."
            )
        return str(choice["message"].get("content") or "")

    def _remember(self, turn: list[dict[str, str]]) -> None:
        self._history = [*self._history, *turn][-HISTORY_MESSAGES:]
        while self._history and self._history[0]["role"] != "user":
            self._history.pop(0)  # a template may insist the history starts with the user


def fit_history(
    history: list[dict[str, str]], room: int, count: Callable[[dict[str, str]], int]
) -> list[dict[str, str]]:
    """The newest messages of ``history`` that take at most ``room`` tokens together,
    starting with a user message (a template may insist on it)."""
    kept: list[dict[str, str]] = []
    used = 0
    for message in reversed(history):
        used += count(message)
        if used > room:
            break
        kept.append(message)
    kept.reverse()
    while kept and kept[0]["role"] != "user":
        kept.pop(0)
    return kept


def parse_answer(raw: str) -> JsonObject:
    """The model's one JSON object (the grammar makes it one; checked all the same)."""
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise BackendError(f"The local model did not answer in JSON: {raw[:200]!r}") from exc
    if not isinstance(answer, dict) or not ("reply" in answer or "call" in answer):
        raise BackendError(f"The local model's answer has neither reply nor call: {raw[:200]!r}")
    return dict(answer)  # pyright: ignore[reportUnknownArgumentType]


def model_schema(schema: JsonObject) -> JsonObject:
    """A tool's input schema as offered to the model: without the host's own fields."""
    shown = copy.deepcopy(schema)
    properties = shown.get("properties", {})
    for hidden in HIDDEN_ARGUMENTS:
        properties.pop(hidden, None)
    shown["required"] = [r for r in shown.get("required", []) if r not in HIDDEN_ARGUMENTS]
    return shown


def system_message(prompt: str, tools: list[tuple[str, str, JsonObject]]) -> str:
    lines = [prompt.rstrip(), "", PROTOCOL]
    for name, description, schema in tools:
        lines.append(f"## {name}\n{description}\nArguments (JSON schema): {json.dumps(schema)}\n")
    return "\n".join(lines)


def answer_schema(tools: list[tuple[str, str, JsonObject]]) -> JsonObject:
    """One JSON schema for every allowed answer: a reply, or a call of one tool with
    that tool's arguments. Each tool's ``$defs`` are hoisted under a prefixed name."""
    defs: JsonObject = {}
    choices: list[JsonObject] = [
        {
            "type": "object",
            "properties": {"reply": {"type": "string"}},
            "required": ["reply"],
            "additionalProperties": False,
        }
    ]
    for name, _description, schema in tools:
        arguments = copy.deepcopy(schema)
        own = arguments.pop("$defs", {})
        for key, value in own.items():
            defs[f"{name}__{key}"] = _loosen(_prefix_refs(value, name))
        arguments = _loosen(_prefix_refs(arguments, name))
        choices.append(
            {
                "type": "object",
                "properties": {"call": {"const": name}, "arguments": arguments},
                "required": ["call", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"$defs": defs, "oneOf": choices}


def _prefix_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out: JsonObject = {}
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = f"#/$defs/{prefix}__{value.removeprefix('#/$defs/')}"
            else:
                out[str(key)] = _prefix_refs(value, prefix)  # pyright: ignore[reportUnknownArgumentType]
        return out
    if isinstance(node, list):
        return [_prefix_refs(item, prefix) for item in node]  # pyright: ignore[reportUnknownVariableType]
    return node


def _loosen(node: Any) -> Any:
    """``node`` without the bounds in ``LOOSENED`` and without titles and descriptions."""
    if isinstance(node, list):
        return [_loosen(item) for item in node]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(node, dict):
        return node
    out: JsonObject = {}
    for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
        if key == "properties" and isinstance(value, dict):
            out[key] = {str(k): _loosen(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
        elif key not in LOOSENED and key not in ("title", "description", "default"):
            out[str(key)] = _loosen(value)
    return out
