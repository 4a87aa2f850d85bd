"""A rule's literal prefix (what lets a text without it skip the rule) is only what
every match must start with: an optional, repeated or case-folded start gives none."""

from __future__ import annotations

import re

import pytest

from mama_core.memory.secret_rules import literal_prefix, rules


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        (r"sk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
        (r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
        (r"ab?c", "a"),  # b is optional: not part of every match
        (r"a{2}b", ""),
        (r"a*b", ""),
        (r"(?:hf_|api_org_)x", ""),
        (r"(?i)sk-x", ""),  # case-folded: 'SK-X' matches too
        (r"(?i:sk)-x", ""),
        (r"\$(?:2a)\$", "$2a$"),  # a plain group is part of the sequence
    ],
)
def test_the_prefix_is_what_every_match_starts_with(pattern: str, prefix: str) -> None:
    compiled = re.compile(pattern)
    assert literal_prefix(compiled) == prefix


def test_most_rules_have_a_prefix_and_a_text_without_it_is_passed_over() -> None:
    anthropic = next(rule for rule in rules() if rule.kind == "Anthropic API key")
    token = "sk-ant-" + "a1B2" * 6
    assert anthropic.literal == "sk-ant-"
    assert anthropic.found_in(f"the key is {token}")  # control: found with its prefix
    assert not anthropic.found_in(f"the key is {token.replace('sk-ant-', 'sk-an-')}")
    assert sum(1 for rule in rules() if rule.literal) >= len(rules()) // 2
