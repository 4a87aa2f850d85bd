"""The README renders as intended on GitHub: every code block closes on a line of its own."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^\s*```")


def fence_lines(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if FENCE.match(line)]


def test_every_closing_fence_stands_alone() -> None:
    """GitHub treats ```` ``` After that`` as text inside the block, not its end,
    so the rest of the page would render as shell."""
    fences = fence_lines(README.read_text("utf-8"))
    assert len(fences) >= 4, "the README's shell blocks were not found"
    assert len(fences) % 2 == 0, f"an unclosed code block: {fences}"
    closing = fences[1::2]
    bad = [(n, line) for n, line in closing if line.strip() != "```"]
    assert bad == [], f"text after a closing fence: {bad}"
    opening = fences[0::2]
    assert all(line.strip().startswith("```") for _, line in opening)


def test_the_install_section_is_outside_any_block() -> None:
    """Read as CommonMark does: only a bare fence closes a block, so the heading
    is a heading and not a line of shell."""
    inside = False
    for line in README.read_text("utf-8").splitlines():
        if inside and line.strip() == "```":
            inside = False
        elif not inside and FENCE.match(line):
            inside = True
        elif line.startswith("## Install the app"):
            assert not inside, "the Install the app heading renders inside a code block"
            return
    raise AssertionError("the Install the app section was not found")
