"""``mama mcp`` answers every line a client writes: malformed messages get a
JSON-RPC error (with the request's id when it can be read) and the session goes
on, as the valid request after each of them proves. Driven with raw lines on the
real subprocess's stdin, as a hostile or broken client would write them."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.mcp.wire_guard import MAX_DEPTH, screen
from tests.app.mcp.conftest import VENV_BIN

TIMEOUT_S = 120.0


class RawSession:
    """``mama mcp`` with lines written to its stdin and read from its stdout."""

    def __init__(self, env: dict[str, str], cwd: Path, errlog: IO[str]) -> None:
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "mama"), "mcp", "--project", "wire"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, raw: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next response on stdout (notifications skipped)."""
        while True:
            line = self.lines.get(timeout=TIMEOUT_S)
            assert line, "the server closed its stdout"
            message = json.loads(line)
            if "id" in message:
                return message

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        answer = self.answer()
        assert answer["id"] == request_id, answer
        return answer

    def close(self) -> int:
        """Hang up, wait for the server to exit and close the pipes; its exit status."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        status = self.proc.wait(timeout=TIMEOUT_S)
        self._pump_thread.join(timeout=TIMEOUT_S)
        self.proc.stdout.close()
        return status


@pytest.fixture
def session(tmp_path: Path, mama_env: dict[str, str]) -> Any:
    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        raw = RawSession(mama_env, tmp_path, errlog)
        try:
            hello = raw.request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-wire-test", "version": "1"},
                },
            )
            assert "result" in hello, hello
            raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            yield raw
        finally:
            raw.close()


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


BAD_LINES: list[tuple[str, str, int | None, int]] = [
    ("invalid JSON", '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', None, -32700),
    ("not JSON at all", "hello server", None, -32700),
    ("a number as method", '{"jsonrpc": "2.0", "id": 11, "method": 5}', 11, -32600),
    (
        "a list as params",
        '{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": [1]}',
        12,
        -32602,
    ),
    (
        "a lone surrogate",
        '{"jsonrpc": "2.0", "id": 13, "method": "tools/call", '
        '"params": {"name": "search", "arguments": {"query": "a\\ud800b"}}}',
        13,
        -32602,
    ),
    (
        "deep nesting",
        '{"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {"name": "search", '
        f'"arguments": {{"query": "x", "deep": {_deep(20000)}}}}}}}',
        14,
        -32600,
    ),
    ("a batch", '[{"jsonrpc": "2.0", "id": 15, "method": "tools/list"}]', None, -32600),
    ("a boolean id", '{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, -32600),
    ("no jsonrpc version", '{"id": 17, "method": "ping"}', 17, -32600),
    ("a number", "42", None, -32600),
]


def test_every_bad_line_is_answered_and_the_session_goes_on(session: RawSession) -> None:
    for number, (name, line, request_id, code) in enumerate(BAD_LINES, start=100):
        session.send(line)
        answer = session.answer()
        assert answer["jsonrpc"] == "2.0", name
        assert answer["id"] == request_id, (name, answer)
        assert answer["error"]["code"] == code, (name, answer)
        assert answer["error"]["message"], name
        # Control: a valid request right after is answered in the same session.
        listed = session.request(number, "tools/list", {})
        assert "search" in {tool["name"] for tool in listed["result"]["tools"]}, name
    assert session.close() == 0


def test_huge_ids_through_mcp_tools_are_invalid_input(session: RawSession) -> None:
    saved = session.request(
        1, "tools/call", {"name": "save", "arguments": {"kind": "fact", "summary": "Wires hum"}}
    )
    judgment_id = saved["result"]["structuredContent"]["judgment_id"]
    got = session.request(2, "tools/call", {"name": "get", "arguments": {"id": judgment_id}})
    assert got["result"]["structuredContent"]["record"]["summary"] == "Wires hum"  # control
    for number, big in enumerate((2**53, 2**63, 2**64), start=3):
        for tool, arguments in (
            ("get", {"id": big}),
            ("retire", {"id": big, "reason": "old"}),
            ("update_outcome", {"id": big, "outcome": "done"}),
            ("link", {"src": judgment_id, "dst": big, "kind": "supports"}),
            ("timeline", {"id": big}),
        ):
            result = session.request(number, "tools/call", {"name": tool, "arguments": arguments})[
                "result"
            ]
            assert result["isError"] is True, (tool, big)
            assert result["structuredContent"]["error"]["code"] == "invalid_input", (tool, big)


def test_screen_passes_what_the_sdk_takes() -> None:
    """The filter alone: valid messages pass unchanged (requests, notifications,
    responses, unicode, nesting at the limit); the bad lines above do not."""
    good = [
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "search", '
        '"arguments": {"query": "caf\\u00e9 \\ud83d\\ude00 運用"}}}',
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 3, "result": {}}',
        '{"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "no"}}',
        '{"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"a": ' + _deep(MAX_DEPTH - 2) + "}}",
    ]
    for line in good:
        assert screen(line) is None, line
    for name, line, request_id, code in BAD_LINES:
        refusal = screen(line)
        assert refusal is not None, name
        assert (refusal.request_id, refusal.code) == (request_id, code), name


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_screen_never_raises_on_any_line(line: str) -> None:
    """Whatever a client writes, the filter decides without an exception of its own."""
    refusal = screen(line)
    assert refusal is None or refusal.response().error.code < 0


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_plain_json_arguments_pass(arguments: Any) -> None:
    """Control for the filter: a well-formed request passes whatever its (shallow) arguments."""
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "save", "arguments": {"a": arguments}},
        }
    )
    assert screen(line) is None  # hypothesis' text has no lone surrogates by default
