"""The secret scanner against a corpus kept as data (``secret_corpus.jsonl``):
well-known token shapes, passwords stated in prose and simple disguises
(zero-width characters, base64, URL encoding) are refused; look-alikes
(publishable keys, prose about passwords, UUIDs, git SHAs) are allowed.

Every value is fabricated in its provider's format; none is a live credential.
The test prints the refused and allowed counts (run with ``-s`` to see them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mama_core.memory import Engine, SecretRefusedError
from mama_core.memory.secrets_scan import find_secret
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, event_count

CORPUS = Path(__file__).with_name("secret_corpus.jsonl")


def _corpus() -> list[dict[str, str]]:
    with CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_corpus_counts() -> None:
    rows = _corpus()
    must_refuse = [r for r in rows if r["expect"] == "refuse"]
    must_allow = [r for r in rows if r["expect"] == "allow"]
    refused = [r["note"] for r in must_refuse if find_secret(r["text"]) is not None]
    allowed = [r["note"] for r in must_allow if find_secret(r["text"]) is None]
    print(
        f"\nsecret corpus: refused {len(refused)} of {len(must_refuse)} secrets, "
        f"allowed {len(allowed)} of {len(must_allow)} look-alikes"
    )
    assert len(must_refuse) >= 30 and len(must_allow) >= 30
    missed = sorted({r["note"] for r in must_refuse} - set(refused))
    false_alarms = sorted({r["note"] for r in must_allow} - set(allowed))
    assert missed == [], missed
    assert false_alarms == [], false_alarms


@pytest.mark.parametrize("row", _corpus(), ids=lambda row: row["note"])
def test_each_corpus_line(row: dict[str, str]) -> None:
    found = find_secret(row["text"])
    if row["expect"] == "refuse":
        assert found is not None, row["note"]
    else:
        assert found is None, (row["note"], found)


def test_a_disguised_token_is_refused_in_a_save_and_the_plain_note_kept(engine: Engine) -> None:
    """Through the engine: the base64 and zero-width disguises are refused without
    echoing the value; the same sentence without the token is saved."""
    rows = {r["note"]: r["text"] for r in _corpus()}
    events = event_count(engine)
    for note in ("base64 of a GitHub token", "zero-width inside a GitHub token"):
        payload = {"kind": "fact", "summary": f"CI uses {rows[note]}"}
        with pytest.raises(SecretRefusedError) as info:
            engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)
        assert rows[note] not in json.dumps(info.value.to_dict())
    assert event_count(engine) == events
    saved = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "CI uses the token in the vault"},
        OWNER,
        OWNER_GRANT,
    )
    assert saved["status"] == "active"
