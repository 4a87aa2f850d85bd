"""How Slack's refusals reach the owner: each Web API error as one ``ConnectorError`` line.

Slack answers most errors with HTTP 200 and ``{"ok": false, "error": "<code>"}``;
the sdk raises them as ``SlackApiError``. Here they become a ``Problem`` for the
runtime and a sentence for the owner (never the token, never a traceback). A 429's
``Retry-After`` is waited out in place when short (``WaitOutShortRateLimits``, one of
the sdk's retry handlers); a longer one is handed to the runtime as ``retry_after``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from app.connectors.base import ConnectorError, Problem

AUTH_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"}
)
PERMISSION_ERRORS = frozenset({"no_permission", "ekm_access_denied", "access_denied"})
DEFAULT_RETRY_AFTER = 30.0
"""Seconds to wait after a 429 that did not say how long."""


class SlackRefused(ConnectorError):
    """A Slack API error, translated; ``code`` keeps Slack's own name for it."""

    def __init__(
        self, problem: Problem, message: str, code: str, *, retry_after: float | None = None
    ) -> None:
        super().__init__(problem, message, retry_after=retry_after)
        self.code = code


def translate(error: SlackApiError, method: str, channel: str | None) -> SlackRefused:
    """``error`` from ``method`` (about ``channel``, if one) as the owner should read it."""
    response = error.response
    # Usually the sdk's response; for a body that is not JSON, aiohttp's own.
    status = int(getattr(response, "status_code", None) or getattr(response, "status", 0) or 0)
    data = getattr(response, "data", None)
    data = data if isinstance(data, dict) else {}
    code = str(data.get("error") or "")
    where = channel or "a channel"
    if status == 429 or code == "ratelimited":
        wait = retry_after(getattr(response, "headers", {}) or {})
        return SlackRefused(
            Problem.RATE_LIMITED,
            f"Slack asks to wait {wait:g} s (rate limit on {method})",
            code or "ratelimited",
            retry_after=wait,
        )
    if code in AUTH_ERRORS:
        return SlackRefused(
            Problem.AUTH,
            f"Slack refused the token ({code}): store a valid bot or user token for this connector",
            code,
        )
    if code == "missing_scope":
        needed = str(data.get("needed") or "a scope")
        return SlackRefused(
            Problem.PERMISSION,
            f"the Slack token lacks the scope {needed} (for {method}): add it to the Slack app"
            " and reinstall the app",
            code,
        )
    if code == "not_in_channel":
        return SlackRefused(
            Problem.PERMISSION, f"the Slack app is not in {where}: invite it there", code
        )
    if code in PERMISSION_ERRORS:
        return SlackRefused(Problem.PERMISSION, f"Slack refused {method} on {where} ({code})", code)
    if code == "channel_not_found":
        return SlackRefused(
            Problem.NOT_FOUND,
            f"Slack channel {where} not found (deleted, or not visible to this token)",
            code,
        )
    if code in ("thread_not_found", "user_not_found", "user_not_visible"):
        return SlackRefused(Problem.NOT_FOUND, f"Slack answered {method} with {code}", code)
    if not code and status == 200:
        return SlackRefused(
            Problem.UNAVAILABLE, f"Slack answered {method} with something not JSON", "not_json"
        )
    return SlackRefused(
        Problem.UNAVAILABLE,
        f"Slack answered {method} with {code or f'HTTP {status}'}",
        code or str(status),
    )


def retry_after(headers: Mapping[str, Any]) -> float:
    """Seconds from a ``Retry-After`` header (a value or a list of values)."""
    for name, value in headers.items():
        if name.lower() == "retry-after":
            first = value[0] if isinstance(value, list) and value else value
            with contextlib.suppress(TypeError, ValueError):
                return max(0.0, float(str(first)))
    return DEFAULT_RETRY_AFTER


class WaitOutShortRateLimits(AsyncRetryHandler):
    """Retry a 429 after its Retry-After when that is at most ``max_wait`` seconds.

    (The sdk's own ``AsyncRateLimitErrorRetryHandler`` waits however long Slack says,
    which would hold a poll for minutes; longer waits belong to the runtime's backoff.)
    """

    def __init__(self, max_wait: float, max_retry_count: int = 3) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = max_wait

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        return retry_after(response.headers) <= self.max_wait

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        wait = retry_after(response.headers) if response is not None else DEFAULT_RETRY_AFTER
        await asyncio.sleep(wait)
        state.increment_current_attempt()
