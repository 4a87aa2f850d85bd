"""How guidance text is measured against a token budget.

We do not run the agent's tokenizer (there are several backends, and none is
needed to stay under a budget): one token is counted per four characters,
rounded up, over the whole text including newlines. English prose averages
about four characters per token for the usual BPE vocabularies, so the
estimate is close for prose and errs high for short words; a budget is never
exceeded by more than the estimate's own error.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the project's token estimate."""
    return -(-len(text) // CHARS_PER_TOKEN)


def chars_for(tokens: int) -> int:
    """The most characters a text may have to count as at most ``tokens`` tokens."""
    return max(tokens, 0) * CHARS_PER_TOKEN
