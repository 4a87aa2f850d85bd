"""The fast canonical JSON writes ``rfc8785``'s bytes for every value (and refuses
what it refuses): the store's hashes must not change with the encoder."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from mama_core.store import canonical_json
from mama_core.store.canonical_json import _plain  # pyright: ignore[reportPrivateUsage]

# Characters that tell encoders apart: controls, quotes, backslash, DEL, the line
# separators, the surrogate edges, private use (after the surrogates in code points,
# before them in UTF-16 units) and astral characters.
TRICKY = '\x00\x01\x08\t\n\x0c\r\x1f"\\/\x7f\u2028\u2029\ud7ff\ue000\uffff\U00010000\U0001f600é'
text = st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(text, inner, max_size=4)
    ),
    max_leaves=20,
)


def _outcome(encode: Any, value: Any) -> tuple[str, bytes | str]:
    try:
        return ("ok", encode(value))
    except ValueError as exc:  # CanonicalizationError, or rfc8785's own UnicodeEncodeError
        return ("refused", type(exc).__name__)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_bytes_are_rfc8785s(value: Any) -> None:
    assert _outcome(canonical_json.dumps, value) == _outcome(rfc8785.dumps, value)


@pytest.mark.parametrize(
    "value",
    [
        {"\ue000": 1, "\U0001f600": 2},  # UTF-16 puts the astral key first
        {"a": 1.0, "b": 1e21, "c": 1e-7, "d": -0.0},  # floats as ECMAScript writes them
        [2**53 - 1, -(2**53 - 1)],
        "\ud800",  # a lone surrogate is refused
        [2**53],  # beyond the safe integers: refused
        {1: "a"},  # a key that is not a string: refused (json would quote it)
    ],
)
def test_the_edges_json_alone_gets_wrong(value: Any) -> None:
    assert _outcome(canonical_json.dumps, value) == _outcome(rfc8785.dumps, value)


def test_what_the_store_hashes_takes_the_fast_path() -> None:
    # A save's event payload, its content and a vector's seal input: the fast path
    # covers them (else the speed-up silently goes), and only a float leaves it.
    event = {
        "kind": "fact",
        "content_hash": "ab" * 32,
        "scopes": ["global", "project:web"],
        "transitions": [{"id": 7, "from": None, "to": "active", "involvement": "owner_stated"}],
        "rows": {"judgments": {"7": "cd" * 32}, "receipts": {"c-1": "ef" * 32}},
        "format": 2,
        "summary": 'Zoë said "ship it"\n\u2028today ✓ \U0001f680',
    }
    seal = ["embeddings", 7, "model", 384, "00ff" * 768]
    assert _plain(event) and _plain(seal)
    assert canonical_json.dumps(event) == rfc8785.dumps(event)
    assert not _plain({**event, "confidence": 0.9})
    assert canonical_json.dumps({"confidence": 0.9}) == b'{"confidence":0.9}'
