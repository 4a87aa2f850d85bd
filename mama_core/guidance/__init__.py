"""Guidance for the agent: a bounded session-start index and deltas between turns.

``render_index`` lists active guidance (constraints first) within a token
budget; ``render_delta`` says what was added, revised or retired since the
watermark the previous render returned.
"""

from mama_core.guidance.delta import GuidanceDelta, Retirement, Revision, render_delta
from mama_core.guidance.index import DEFAULT_BUDGET_TOKENS, RenderedGuidance, render_index
from mama_core.guidance.items import KIND_ORDER, GuidanceItem, active_guidance
from mama_core.guidance.tokens import approx_tokens

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "KIND_ORDER",
    "GuidanceDelta",
    "GuidanceItem",
    "RenderedGuidance",
    "Retirement",
    "Revision",
    "active_guidance",
    "approx_tokens",
    "render_delta",
    "render_index",
]
