"""Agent text to Telegram HTML, and splitting it under the limit without breaking it."""

from __future__ import annotations

import html.parser
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.telegram.formatting import split_html, to_html, to_plain, utf16_len


class TagChecker(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ok = True

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.ok = False


def balanced(part: str) -> bool:
    checker = TagChecker()
    checker.feed(part)
    checker.close()
    return checker.ok and not checker.stack


def test_markdown_becomes_telegram_html_and_everything_else_is_escaped() -> None:
    out = to_html("**Ship** it _now_ with `a<b` & [docs](https://x.y/?a=1&b=2) snake_case")
    assert out == (
        "<b>Ship</b> it <i>now</i> with <code>a&lt;b</code> &amp; "
        '<a href="https://x.y/?a=1&amp;b=2">docs</a> snake_case'
    )
    block = to_html("```py\nif a < b:\n    pass\n```")
    assert block == '<pre><code class="language-py">if a &lt; b:\n    pass</code></pre>'
    assert to_html("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_short_text_is_one_part_and_empty_text_none() -> None:
    assert split_html("hello") == ["hello"]
    assert split_html("   ") == []


def test_emoji_count_as_two_units_like_telegram() -> None:
    text = "😀" * 30  # 60 UTF-16 units
    parts = split_html(text, limit=25)
    assert all(utf16_len(p) <= 25 for p in parts)
    assert "".join(parts) == text


WORDS = st.sampled_from(
    [
        "word",
        "**bold words**",
        "_it_",
        "`co<de>`",
        "&",
        "<",
        "😀",
        "\n",
        "\n\n",
        "x" * 40,
        "```\nline one\n    indented\n```",
        "[l](https://e.x/a)",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=80), st.integers(min_value=60, max_value=300))
def test_every_part_fits_is_well_formed_and_nothing_is_lost(pieces: list[str], limit: int) -> None:
    source = to_html(" ".join(pieces))
    parts = split_html(source, limit=limit)
    assert all(utf16_len(p) <= limit for p in parts)
    assert all(balanced(p) for p in parts)
    assert "".join(to_plain(p) for p in parts).strip() == to_plain(source).strip()
