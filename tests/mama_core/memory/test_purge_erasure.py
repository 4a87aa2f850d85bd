"""Purge really erases: after purging, the database file and its WAL are
decrypted page by page (SQLCipher 4 layout, our own AES-CBC with the raw key)
and none of the purged words is left anywhere: not in the row, the FTS index
pages, freed pages or the WAL. The same decryption finds a word of a record that
was not purged, so it is known to work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mama_core.memory import Engine, InvalidTransitionError, NotGrantedError, verify_store
from mama_core.store import DbKey
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save, search_ids

PAGE_SIZE = 4096
RESERVE = 80  # 16-byte IV + 64-byte HMAC-SHA512 at the end of every page
SALT = 16
WAL_HEADER = 32
FRAME_HEADER = 24

PURGED_WORDS = [
    "quagmirette",
    "zephyrbloom",
    "narwhalian",
    "marzipanoid",
    "gondolieria",
    "flibbertigib",
    "xylophonist",
    "predecessorish",
]
CONTROL_WORD = "wombatique"


def _decrypt_page(page: bytes, key: bytes, first: bool) -> bytes:
    start = SALT if first else 0
    iv = page[PAGE_SIZE - RESERVE : PAGE_SIZE - RESERVE + 16]
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    return decryptor.update(page[start : PAGE_SIZE - RESERVE]) + decryptor.finalize()


def decrypted_file(path: Path, key: bytes) -> list[bytes]:
    data = path.read_bytes()
    assert len(data) % PAGE_SIZE == 0
    return [
        _decrypt_page(data[n * PAGE_SIZE : (n + 1) * PAGE_SIZE], key, n == 0)
        for n in range(len(data) // PAGE_SIZE)
    ]


def decrypted_wal(path: Path, key: bytes) -> list[bytes]:
    if not path.exists():
        return []
    data = path.read_bytes()
    frames = []
    offset = WAL_HEADER
    while offset + FRAME_HEADER + PAGE_SIZE <= len(data):
        page_number = int.from_bytes(data[offset : offset + 4], "big")
        page = data[offset + FRAME_HEADER : offset + FRAME_HEADER + PAGE_SIZE]
        frames.append(_decrypt_page(page, key, page_number == 1))
        offset += FRAME_HEADER + PAGE_SIZE
    return frames


def fragments(word: str) -> list[bytes]:
    """The word and pieces of it (FTS5 stores stems, prefix-compressed)."""
    return [w.encode() for w in (word, word[:8], word[2:8], word[-6:])]


def found_words(pages: list[bytes], words: list[str]) -> set[str]:
    lowered = [p.lower() for p in pages]
    return {w for w in words for page in lowered for f in fragments(w) if f in page}


@pytest.fixture
def raw_key(db_key: DbKey) -> bytes:
    assert db_key.raw
    return bytes.fromhex(db_key.reveal())


def test_purged_words_are_gone_from_file_and_wal(engine: Engine, raw_key: bytes) -> None:
    db_path = engine.store.path
    wal_path = db_path.with_name(db_path.name + "-wal")
    control = save(engine, f"The {CONTROL_WORD} plan stays", topic="control")["judgment_id"]
    old = save(engine, "Earlier predecessorish version")["judgment_id"]
    target = engine.dispatch(
        "memory.save",
        {
            "kind": "workflow",
            "topic": "xylophonist",
            "summary": "The quagmirette zephyrbloom routine",
            "details": "Narwhalian details go here",
            "applies_when": "whenever gondolieria happens",
            "steps": ["mix the marzipanoid", "rest"],
            "replaces": [old],
        },
        OWNER,
        OWNER_GRANT,
    )["judgment_id"]
    engine.dispatch(
        "memory.update_outcome",
        {"id": target, "outcome": "flibbertigib went well"},
        OWNER,
        OWNER_GRANT,
    )
    # They were there, in the WAL: this also proves the WAL frames decrypt.
    assert found_words(decrypted_wal(wal_path, raw_key), PURGED_WORDS) == set(PURGED_WORDS)

    receipt = engine.dispatch(
        "memory.purge",
        {"id": target, "include_chain": True, "reason": "owner asked to forget"},
        OWNER,
        OWNER_GRANT,
    )
    assert sorted(receipt["purged"]) == sorted([target, old])

    pages = decrypted_file(db_path, raw_key)
    wal = decrypted_wal(wal_path, raw_key)
    # The decryption is right: page 1's header fields (page size 4096, 80 reserved bytes).
    assert pages[0][:2] == PAGE_SIZE.to_bytes(2, "big") and pages[0][4] == RESERVE
    assert found_words(pages + wal, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages + wal, PURGED_WORDS) == set()

    # The record of the purge stays: status, hashes, who, why; no text.
    read = engine.dispatch("memory.read", {"id": target}, OWNER, OWNER_GRANT)
    assert read["record"]["status"] == "purged"
    assert read["record"]["summary"] == "" and read["record"]["steps"] == []
    purge_event = read["events"][-1]
    assert purge_event["action"] == "memory.purge"
    assert purge_event["actor"]["kind"] == "owner"
    assert purge_event["payload"]["reason"] == "owner asked to forget"
    assert {e["id"] for e in purge_event["payload"]["erased"]} == {target, old}
    assert all(len(e["hmac"]) == 64 for e in purge_event["payload"]["erased"])
    assert search_ids(engine, "quagmirette zephyrbloom", statuses=["purged"]) == []
    assert search_ids(engine, CONTROL_WORD) == [control]
    assert (
        engine.store.conn.execute(
            "SELECT count(*) FROM embeddings WHERE judgment_id IN (?, ?)", (target, old)
        ).fetchone()[0]
        == 0
    )
    assert verify_store(engine.store.conn, engine.store.secret).ok


def test_purged_observation_text_is_gone(engine: Engine, raw_key: bytes) -> None:
    kept = engine.dispatch(
        "observation.record",
        {"source": "gmail", "external_id": "m1", "text": f"keep {CONTROL_WORD} mail"},
        OWNER,
        OWNER_GRANT,
    )
    gone = engine.dispatch(
        "observation.record",
        {
            "source": "gmail",
            "external_id": "m2",
            "author": "narwhalian@example.com",
            "text": "quagmirette zephyrbloom mail",
        },
        OWNER,
        OWNER_GRANT,
    )
    engine.dispatch(
        "memory.purge",
        {"observation_id": gone["observation_id"], "reason": "private"},
        OWNER,
        OWNER_GRANT,
    )
    db_path = engine.store.path
    pages = decrypted_file(db_path, raw_key) + decrypted_wal(
        db_path.with_name(db_path.name + "-wal"), raw_key
    )
    assert found_words(pages, [CONTROL_WORD]) == {CONTROL_WORD}
    assert found_words(pages, ["quagmirette", "zephyrbloom", "narwhalian"]) == set()
    row = engine.store.conn.execute(
        "SELECT text, purged_at FROM observations WHERE id = ?", (kept["observation_id"],)
    ).fetchone()
    assert row[1] is None


def test_purge_is_owner_only_and_once(engine: Engine) -> None:
    jid = save(engine, "Something to forget")["judgment_id"]
    with pytest.raises(NotGrantedError):
        engine.dispatch("memory.purge", {"id": jid, "reason": "x"}, AGENT, agent_grant())
    engine.dispatch("memory.purge", {"id": jid, "reason": "x"}, OWNER, OWNER_GRANT)
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("memory.purge", {"id": jid, "reason": "x"}, OWNER, OWNER_GRANT)
    event = engine.dispatch("memory.read", {"id": jid}, OWNER, OWNER_GRANT)["events"][-1]
    assert "forget" not in json.dumps(event)
