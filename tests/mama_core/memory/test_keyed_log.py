"""The log keeps keyed hashes, and reasons are erasable text.

- A purged 4-digit PIN cannot be found again by hashing all 10^4 PINs: no bare
  sha256 of the PIN or of any canonical form the store hashes (the erased
  fields, the content, the request) is anywhere in the decrypted file or WAL,
  while the same forms keyed with the store's secret are (the positive control).
- Reasons (retire, reject, link, outcome, tombstone) leave the file when the
  record they are about is purged; a reason about a record that was not purged
  stays. Readers show "(erased)" in their place, and verify still holds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mama_core.canonical import canonical_hash, sha256_hex
from mama_core.errors import MamaError
from mama_core.memory import Engine, verify_store
from mama_core.memory.events import ERASED
from mama_core.memory.inputs import SaveInput
from mama_core.memory.tombstones import fingerprint
from mama_core.model import JUDGMENT_COLUMNS, Judgment, content_fields
from mama_core.store import DbKey
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save
from tests.mama_core.memory.test_purge_erasure import (
    decrypted_file,
    decrypted_wal,
    found_words,
)

HEX_RUN = re.compile(rb"[0-9a-f]{64,}")


@pytest.fixture
def raw_key(db_key: DbKey) -> bytes:
    return bytes.fromhex(db_key.reveal())


def hex_digests_in_store(path: Path, key: bytes) -> set[str]:
    """Every 64-hex-digit string in the decrypted pages of the file and its WAL (each
    window of a longer run too: a column before a hash may end in a hex letter)."""
    pages = decrypted_file(path, key) + decrypted_wal(path.with_name(path.name + "-wal"), key)
    runs = [m.decode() for page in pages for m in HEX_RUN.findall(page)]
    return {run[i : i + 64] for run in runs for i in range(len(run) - 63)}


def pin_forms(pin: str, row: Judgment, request: dict[str, Any]) -> list[Any]:
    """The values a store would hash for a judgment whose summary is ``pin``."""
    erased = {
        "topic": row.topic,
        "summary": pin,
        "details": row.details,
        "applies_when": row.applies_when,
        "steps": row.steps,
        "outcome": None,
    }
    content = content_fields(
        kind=row.kind,
        topic=row.topic,
        summary=pin,
        details=row.details,
        applies_when=row.applies_when,
        steps=row.steps,
        confidence=row.confidence,
        valid_from=row.valid_from,
        recorded_at=row.recorded_at,
        provenance=row.provenance,
        command_id=row.command_id,
    )
    return [pin, erased, content, {**request, "summary": pin}]


def test_a_purged_pin_cannot_be_brute_forced(engine: Engine, raw_key: bytes) -> None:
    payload = {"kind": "fact", "summary": "4711", "topic": "", "command_id": "pin-1"}
    jid = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)["judgment_id"]
    engine.dispatch("memory.purge", {"id": jid, "reason": "a secret"}, OWNER, OWNER_GRANT)
    row = Judgment.from_row(
        engine.store.conn.execute(
            f"SELECT {JUDGMENT_COLUMNS} FROM judgments WHERE id = ?", (jid,)
        ).fetchone()
    )
    assert row.status == "purged" and row.summary == ""
    request = SaveInput.model_validate(payload).model_dump(mode="json")
    request.pop("command_id")
    in_store = hex_digests_in_store(engine.store.path, raw_key)

    bare: set[str] = set()
    for n in range(10_000):
        pin = f"{n:04d}"
        bare.add(sha256_hex(pin))
        bare.update(canonical_hash(form) for form in pin_forms(pin, row, request))
    assert bare & in_store == set()

    # Positive control: the same forms, keyed with the store's secret, are there.
    secret = engine.store.secret
    erased, content, req = pin_forms("4711", row, request)[1:]
    assert secret.hash(erased) in in_store  # the purge event's digest
    assert secret.hash(content) in in_store  # the save event's content hash
    assert secret.hash_bytes(canonical_hash(req).encode()) in in_store  # the receipt
    assert verify_store(engine.store.conn, secret).ok


def test_a_tombstoned_then_purged_pin_cannot_be_brute_forced(
    engine: Engine, raw_key: bytes
) -> None:
    """The tombstone's fingerprint is keyed too: after retire with forbid_resave and a
    purge, no bare sha256 of any normalised PIN is in the file, while the keyed
    fingerprint is (the control) and still refuses the same text."""
    payload = {"kind": "fact", "summary": "4712", "topic": "", "command_id": "pin-2"}
    jid = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)["judgment_id"]
    engine.dispatch(
        "memory.retire",
        {"id": jid, "reason": "no longer", "status": "stale", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    engine.dispatch("memory.purge", {"id": jid, "reason": "a secret"}, OWNER, OWNER_GRANT)
    in_store = hex_digests_in_store(engine.store.path, raw_key)
    bare = {fingerprint(f"{n:04d}") for n in range(10_000)}
    assert bare & in_store == set()
    assert fingerprint("4712", engine.store.secret) in in_store
    with pytest.raises(MamaError) as refused:
        engine.dispatch("memory.save", {**payload, "command_id": "pin-3"}, OWNER, OWNER_GRANT)
    assert refused.value.code == "tombstoned"
    assert verify_store(engine.store.conn, engine.store.secret).ok


def test_a_tombstone_made_before_keyed_fingerprints_is_rekeyed_by_the_purge(
    engine: Engine, raw_key: bytes
) -> None:
    """A legacy tombstone (bare sha256 fingerprint) still blocks its text, and the
    purge of its record turns the fingerprint into the keyed one."""
    payload = {"kind": "fact", "summary": "4713", "topic": "", "command_id": "pin-4"}
    jid = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)["judgment_id"]
    engine.dispatch(
        "memory.retire",
        {"id": jid, "reason": "no longer", "status": "stale", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    conn = engine.store.conn
    conn.execute(
        "UPDATE tombstones SET fingerprint = ? WHERE judgment_id = ?", (fingerprint("4713"), jid)
    )
    with pytest.raises(MamaError) as refused:
        engine.dispatch("memory.save", {**payload, "command_id": "pin-5"}, OWNER, OWNER_GRANT)
    assert refused.value.code == "tombstoned"
    engine.dispatch("memory.purge", {"id": jid, "reason": "a secret"}, OWNER, OWNER_GRANT)
    (stored,) = conn.execute(
        "SELECT fingerprint FROM tombstones WHERE judgment_id = ?", (jid,)
    ).fetchone()
    assert stored == fingerprint("4713", engine.store.secret)
    assert fingerprint("4713") not in hex_digests_in_store(engine.store.path, raw_key)


REASON_WORDS = ["pangolinish", "okapiform", "axolotlery", "quetzalish", "tapirine"]
CONTROL_REASON = "wombatique"


def test_reasons_leave_the_file_with_the_record(engine: Engine, raw_key: bytes) -> None:
    def owner(action: str, payload: dict[str, Any]) -> dict[str, Any]:
        return engine.dispatch(action, payload, OWNER, OWNER_GRANT)

    target = save(engine, "Releases go out on Fridays", "decision")["judgment_id"]
    other = save(engine, "Releases are tagged", "decision")["judgment_id"]
    kept = save(engine, "Standups are at ten")["judgment_id"]
    owner("memory.link", {"src": other, "dst": target, "kind": "relates_to", "reason": "okapiform"})
    owner(
        "memory.update_outcome",
        {"id": target, "outcome": "went fine", "reason": "axolotlery says so"},
    )
    owner("memory.tombstone", {"id": target, "reason": "tapirine for now"})
    owner(
        "memory.retire",
        {"id": target, "reason": "pangolinish change", "status": "stale", "forbid_resave": True},
    )
    proposal = save(
        engine, "Prefer long meetings", "preference", session=AGENT, grant=agent_grant()
    )["judgment_id"]
    owner("review.reject", {"id": proposal, "reason": "quetzalish no"})
    owner("memory.retire", {"id": kept, "reason": f"{CONTROL_REASON} moved", "status": "stale"})

    db = engine.store.path
    wal = db.with_name(db.name + "-wal")
    before = decrypted_file(db, raw_key) + decrypted_wal(wal, raw_key)
    assert found_words(before, REASON_WORDS) == set(REASON_WORDS)  # they were there

    # Positive control before the purge: readers show the reasons.
    events = owner("memory.read", {"id": target})["events"]
    assert "pangolinish change" in [e["payload"].get("reason") for e in events]

    owner("memory.purge", {"id": target, "reason": "owner asked"})
    owner("memory.purge", {"id": proposal, "reason": "owner asked"})

    pages = decrypted_file(db, raw_key) + decrypted_wal(wal, raw_key)
    assert found_words(pages, [CONTROL_REASON]) == {CONTROL_REASON}
    assert found_words(pages, REASON_WORDS) == set()

    reasons = {
        e["action"]: e["payload"].get("reason")
        for e in owner("memory.read", {"id": target})["events"]
    }
    assert reasons["memory.retire"] == ERASED
    assert reasons["memory.update_outcome"] == ERASED
    assert reasons["memory.link"] == ERASED
    assert reasons["memory.purge"] == "owner asked"  # the why of the erasure stays
    kept_events = owner("memory.read", {"id": kept})["events"]
    assert f"{CONTROL_REASON} moved" in [e["payload"].get("reason") for e in kept_events]
    assert engine.store.conn.execute(
        "SELECT reason FROM tombstones WHERE judgment_id = ?", (target,)
    ).fetchone() == (ERASED,)
    assert verify_store(engine.store.conn, engine.store.secret).ok
