"""Any Unicode string is a valid query: recall never raises on what a person types."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.recall import PRESETS
from tests.mama_core.recall.world import World

NASTY = [
    "",
    "   ",
    '"',
    '""',
    '"unbalanced',
    "NEAR(a b, 3)",
    "a NEAR b",
    "deploy*",
    "^start",
    "(((",
    ")",
    "a AND OR NOT b",
    "col:value",
    "{topic summary}: x",
    "- minus",
    "+ plus",
    "\x01\x02\x1f\x7f",
    "\u200b\u200d\ufeff",
    "\U0001f600 \U0001f9d1\u200d\U0001f4bb",
    "\u0301\u0301",
    "ﷺ",
    "\U0001d518\U0001d52b\U0001d526",  # fraktur letters
    "'; DROP TABLE judgments; --",
    "a" * 5000,
    "東京 * NEAR タワー",
]

# Text that leans on FTS5's operator characters and words, and control characters.
FTS_ALPHABET = st.sampled_from(
    [*'"*^():+-{}., \t\n\r\x0b\x0c\x01\x1b\x7f', "NEAR", "AND", "OR", "NOT", "deploy"]
)
query_text = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=120),
    st.lists(FTS_ALPHABET, max_size=30).map("".join),
)


def test_nasty_queries_do_not_raise(world: World) -> None:
    world.save("Deploy to production only on Tuesdays")
    # Positive control: the same recall finds the row for a plain query.
    assert world.ids("deploy production")
    for text in NASTY:
        for config in PRESETS.values():
            world.search(text, config=config)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=query_text)
def test_any_unicode_query_never_raises(world: World, text: str) -> None:
    if not world.ids("tuesday deploy"):
        world.save("Deploy to production only on Tuesdays")
        world.save("東京タワーで会議をしました")
    hits = world.search(text, include_history=True)
    assert all(h.status == "active" for h in hits)
