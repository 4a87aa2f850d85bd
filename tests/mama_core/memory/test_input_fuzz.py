"""Property tests at the edge: any payload for any action ends in a result or an
engine error (never a crash), and any query text is only words to FTS5."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_core.errors import MamaError
from mama_core.memory import CATALOG, Engine
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save, search_ids

FIELDS = [
    "kind", "summary", "topic", "details", "applies_when", "steps", "scopes", "replaces", "id",
    "reason", "status", "by", "query", "limit", "statuses", "kinds", "valid_from", "valid_at",
    "as_recorded_at", "outcome", "src", "dst", "state", "scope", "forbid_resave", "provenance",
]  # fmt: skip
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=30)
    | st.sampled_from(["fact", "preference", "global", "project:x", "0001-01-01T00:00:00+05:00"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_unique = itertools.count()


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    action=st.sampled_from(sorted(CATALOG.actions)),
    payload=st.dictionaries(st.sampled_from(FIELDS), values, max_size=6),
    as_owner=st.booleans(),
)
def test_any_payload_ends_in_a_result_or_an_engine_error(
    engine: Engine, action: str, payload: dict, as_owner: bool
) -> None:
    session, grant = (OWNER, OWNER_GRANT) if as_owner else (AGENT, agent_grant())
    try:
        result = engine.dispatch(action, payload, session, grant)
    except MamaError as exc:
        assert exc.code != "error"
        return
    assert isinstance(result, dict)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    noise=st.text(max_size=40), punctuation=st.sampled_from(['"', "(", "*", "^", ":", "-", "'", ""])
)
def test_any_query_text_is_only_words(engine: Engine, noise: str, punctuation: str) -> None:
    word = f"okapi{next(_unique)}z"
    jid = save(engine, f"A record about {word}")["judgment_id"]
    engine.dispatch("memory.search", {"query": noise}, OWNER, OWNER_GRANT)
    assert jid in search_ids(engine, f"{noise} {punctuation}{word}{punctuation}", limit=200)
