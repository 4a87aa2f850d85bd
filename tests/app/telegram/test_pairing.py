"""One-time pairing codes: single use, short-lived, stored only as hashes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli.main import cli
from app.durable.transaction import RuntimeDb
from app.telegram.pairing import (
    CODE_TTL,
    LOCKOUT,
    MAX_WRONG_CODES,
    WRONG_CODE_WINDOW,
    AlreadyPairedError,
    Pairing,
    PairOutcome,
    normalise_code,
)
from mama_core.store import Store
from tests.app.runtime.support import ManualClock
from tests.conftest import TEST_KEY_HEX


def test_a_code_pairs_once_and_only_while_fresh(runtime_db: RuntimeDb, clock: ManualClock) -> None:
    pairing = Pairing(runtime_db, clock)
    code = pairing.new_code()
    assert len(normalise_code(code)) == 8 and "-" in code
    stored = runtime_db.conn.execute("SELECT code_hash FROM pairing_codes").fetchall()
    assert normalise_code(code) not in str(stored)  # only its hash is kept

    assert pairing.redeem("WRONG-CODE", 1, 1, "x", private=True).outcome is PairOutcome.WRONG
    assert pairing.owner() is None
    assert pairing.redeem(code.lower().replace("-", " "), 10, 20, "owner", private=True).paired
    owner = pairing.owner()
    assert owner is not None and (owner.chat_id, owner.user_id) == (10, 20)
    assert not pairing.redeem(code, 66, 66, "mallory", private=True).paired  # used
    assert pairing.owner() == owner

    assert pairing.unpair() == owner
    late = pairing.new_code()
    clock.advance(CODE_TTL + timedelta(seconds=1))
    assert not pairing.redeem(late, 66, 66, "mallory", private=True).paired  # expired
    fresh = pairing.new_code()
    assert pairing.redeem(fresh, 11, 21, "new phone", private=True).paired  # positive control
    assert pairing.owner() is not None and pairing.owner().user_id == 21  # type: ignore[union-attr]


def test_the_first_pairing_ends_every_outstanding_code(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    pairing = Pairing(runtime_db, clock)
    first, second = pairing.new_code(), pairing.new_code()
    assert pairing.redeem(first, 10, 10, "owner", private=True).paired
    pairing.unpair()
    # The second code was never used, but the first pairing ended it.
    assert pairing.redeem(second, 66, 66, "mallory", private=True).outcome is PairOutcome.WRONG
    assert pairing.owner() is None
    # Positive control: a code made after that pairs.
    assert pairing.redeem(pairing.new_code(), 66, 66, "new phone", private=True).paired


def test_while_paired_no_other_chat_pairs_and_no_code_is_made(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    pairing = Pairing(runtime_db, clock)
    early, code = pairing.new_code(), pairing.new_code()  # ``code`` leaked to mallory
    assert pairing.redeem(early, 10, 10, "owner", private=True).paired
    with pytest.raises(AlreadyPairedError) as refused:
        pairing.new_code()
    assert refused.value.code == "already_paired"
    assert pairing.redeem(code, 66, 66, "mallory", private=True).outcome is PairOutcome.TAKEN
    assert pairing.redeem(code, 10, 10, "owner", private=True).outcome is PairOutcome.ALREADY
    owner = pairing.owner()
    assert owner is not None and owner.user_id == 10

    # Positive control: once the owner unpairs on the machine, a new code pairs another chat.
    pairing.unpair()
    assert pairing.redeem(pairing.new_code(), 66, 66, "new phone", private=True).paired


def test_a_group_never_becomes_the_owner(runtime_db: RuntimeDb, clock: ManualClock) -> None:
    pairing = Pairing(runtime_db, clock)
    code = pairing.new_code()
    refused = pairing.redeem(code, -100, 10, "group", private=False)
    assert refused.outcome is PairOutcome.NOT_PRIVATE and pairing.owner() is None
    # Positive control: the same code, from a private chat, pairs.
    assert pairing.redeem(code, 10, 10, "owner", private=True).paired


def test_wrong_codes_lock_a_chat_out_and_a_restart_keeps_the_lockout(
    store: Store, clock: ManualClock
) -> None:
    db = RuntimeDb(store.new_connection(), store.path)
    pairing = Pairing(db, clock)
    code = pairing.new_code()
    wrong = "ABCD-EFGH"
    for _ in range(MAX_WRONG_CODES - 1):
        assert pairing.redeem(wrong, 66, 66, "mallory", private=True).outcome is PairOutcome.WRONG
    locked = pairing.redeem(wrong, 66, 66, "mallory", private=True)
    assert locked.outcome is PairOutcome.LOCKED
    assert locked.locked_until == clock.now() + LOCKOUT
    # Locked out: even the right code is refused, and stays refused after a restart.
    assert pairing.redeem(code, 66, 66, "mallory", private=True).outcome is PairOutcome.LOCKED
    db.close()
    db = RuntimeDb(store.new_connection(), store.path)
    pairing = Pairing(db, clock)
    clock.advance(LOCKOUT - timedelta(seconds=1))
    assert pairing.redeem(code, 66, 66, "mallory", private=True).outcome is PairOutcome.LOCKED
    # Another chat is not locked out (the count is per chat).
    assert pairing.redeem(wrong, 67, 67, "other", private=True).outcome is PairOutcome.WRONG
    # Positive control: when the lockout ends, a right code pairs that chat.
    clock.advance(timedelta(seconds=2))
    assert pairing.redeem(pairing.new_code(), 66, 66, "owner", private=True).paired
    db.close()


def test_wrong_codes_spread_out_do_not_lock(runtime_db: RuntimeDb, clock: ManualClock) -> None:
    pairing = Pairing(runtime_db, clock)
    for _ in range(MAX_WRONG_CODES * 2):
        result = pairing.redeem("ABCD-EFGH", 66, 66, "owner", private=True)
        assert result.outcome is PairOutcome.WRONG
        clock.advance(WRONG_CODE_WINDOW / (MAX_WRONG_CODES - 1) + timedelta(seconds=1))
    assert pairing.redeem(pairing.new_code(), 66, 66, "owner", private=True).paired


def test_mama_telegram_pair_code_prints_a_code_the_bot_accepts(
    tmp_path: Path, clean_env: object
) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        cli, ["--home", str(home), "telegram", "pair-code"], env={"MAMA_DB_KEY": TEST_KEY_HEX}
    )
    assert result.exit_code == 0, result.output
    line = next(li for li in result.output.splitlines() if li.startswith("/pair "))
    code = line.split(" ", 1)[1]

    from mama_core.store import DbKey, Store

    with Store.open(home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store:
        db = RuntimeDb(store.new_connection(), store.path)
        try:
            assert Pairing(db).redeem(code, 5, 6, "owner", private=True).paired
        finally:
            db.close()
