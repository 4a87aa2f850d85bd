"""A filter in front of the MCP SDK's stdio transport: every request is answered.

SDK 2.3.0 reads one JSON-RPC message per line and silently drops a line it
cannot parse or validate (invalid JSON, a number as ``method``, a list as
``params``, a lone surrogate, nesting deeper than its parser takes), so the
client waits forever for an answer. This filter reads the lines first: a line
the SDK would accept passes on unchanged; any other gets a JSON-RPC error
response on the same wire — with the request's id when it can be read, else
``null`` as JSON-RPC 2.0 says — and the session goes on.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

MAX_DEPTH = 64
"""The deepest nesting of objects and arrays a message may have (tool arguments
included); deeper is refused before any parser recurses into it."""

_LEADING_ID = re.compile(r'^\s*\{[^{}\[\]]*?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class Refusal:
    """Why a line is not passed on, and the id to answer (None: ``null``)."""

    code: int
    message: str
    request_id: int | str | None

    def response(self) -> types.JSONRPCError:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=self.request_id,
            error=types.ErrorData(code=self.code, message=self.message),
        )


def screen(line: str) -> Refusal | None:
    """None if the SDK can take ``line``; else the refusal to answer it with."""
    if _depth(line) > MAX_DEPTH:
        return Refusal(
            types.INVALID_REQUEST,
            f"The message is nested more than {MAX_DEPTH} levels deep.",
            _leading_id(line),
        )
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return Refusal(types.PARSE_ERROR, "Parse error: the line is not valid JSON.", None)
    if not isinstance(message, dict):
        return Refusal(
            types.INVALID_REQUEST,
            "A message must be one JSON object (batches are not taken).",
            None,
        )
    request_id = _request_id(message)
    problem = _envelope_problem(message)
    if problem is not None:
        return Refusal(problem[0], problem[1], request_id)
    if _has_lone_surrogate(message):
        return Refusal(
            types.INVALID_PARAMS,
            "A string in the message is not valid Unicode (a lone surrogate).",
            request_id,
        )
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return Refusal(
            types.INVALID_REQUEST, "The message is not a valid JSON-RPC 2.0 message.", request_id
        )
    return None


def _depth(line: str) -> int:
    """The deepest nesting of ``{`` and ``[`` outside strings (a linear scan, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest


def _leading_id(line: str) -> int | str | None:
    """The id of a line too deep to parse, when it stands before any nested value."""
    match = _LEADING_ID.match(line)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if _is_id(value) and not _has_lone_surrogate(value) else None


def _is_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _request_id(message: dict[str, Any]) -> int | str | None:
    value = message.get("id")
    return value if _is_id(value) and not _has_lone_surrogate(value) else None


def _envelope_problem(message: dict[str, Any]) -> tuple[int, str] | None:
    """What makes ``message`` no JSON-RPC 2.0 message for MCP, if anything."""
    if message.get("jsonrpc") != "2.0":
        return types.INVALID_REQUEST, 'The message needs "jsonrpc": "2.0".'
    if "id" in message and not _is_id(message["id"]):
        return types.INVALID_REQUEST, "The id must be a string or an integer."
    if "method" in message:
        if not isinstance(message["method"], str):
            return types.INVALID_REQUEST, "The method must be a string."
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return (
                types.INVALID_PARAMS,
                "The params must be an object (MCP takes no positional params).",
            )
    elif not ("id" in message and ("result" in message or "error" in message)):
        return types.INVALID_REQUEST, "The message has no method (and is no response)."
    return None


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` (keys included) holds a UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= char <= "\udfff" for char in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


Answer = Callable[[SessionMessage], Any]


class ScreenedLines:
    """The lines of the client's stream that the SDK can take; the rest are answered.

    Iterated by the SDK's stdin reader in place of stdin. Answers wait until
    ``answer_with`` gives the transport's write stream.
    """

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._ready = anyio.Event()
        self._send: Answer | None = None

    def answer_with(self, send: Answer) -> None:
        """Send refusals through ``send`` (the transport's write stream's ``send``)."""
        self._send = send
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue
            refusal = screen(line)
            if refusal is None:
                yield line
                continue
            log.info("refused a message (%s): %s", refusal.code, refusal.message)
            await self._ready.wait()
            assert self._send is not None
            try:
                await self._send(SessionMessage(refusal.response()))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The client's stdin as a private binary stream; fd 0 reads the null device meanwhile.

    So a child process or stray read cannot take a line off the wire (what the SDK
    does for stdin when it owns it). Fd 0 is pointed back at the wire on exit.
    """
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        with os.fdopen(private, "rb", closefd=False) as stream:
            yield stream
    finally:
        os.dup2(private, 0)
        os.close(private)


def screened_lines(stream: BinaryIO) -> ScreenedLines:
    """The lines of ``stream`` (UTF-8, undecodable bytes replaced, as the SDK reads it)."""
    text = TextIOWrapper(stream, encoding="utf-8", errors="replace")
    return ScreenedLines(anyio.wrap_file(text).__aiter__())
