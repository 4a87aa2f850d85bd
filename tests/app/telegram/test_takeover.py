"""Telegram cannot be taken over: with the real PTB client against the fake Bot API,
a group never pairs, a paired bot refuses every other /pair in silence, guessing is
locked out, and only the owner on the machine unpairs (the old chat is told)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.backends.command_mode import CommandModeBackend
from app.durable.transaction import RuntimeDb
from app.telegram.gateway import UNPAIRED_NOTICE
from app.telegram.pairing import MAX_WRONG_CODES, write_owner
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.runtime.support import MAMA, mama_env
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, STRANGER, Stack, messenger

GROUP = -100200


async def refused_silently(s: Stack, chat_id: int, ignored_before: int, reason: str) -> None:
    """Wait until the gateway logged the update as ignored for ``reason``."""
    await s.api.signal.until(lambda: len(s.gateway.ignored) > ignored_before)
    assert s.gateway.ignored[-1].reason == reason
    assert s.api.texts_to(chat_id) == []


def test_a_group_never_pairs_and_a_paired_bot_refuses_every_other_pair(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            code = await s.runtime.run_db(s.gateway.pairing.new_code)
            # A group and a supergroup, with a right code: refused, in silence.
            for chat_type in ("group", "supergroup"):
                before = len(s.gateway.ignored)
                s.api.push_message(GROUP, OWNER_USER, f"/pair {code}", chat_type=chat_type)
                await refused_silently(s, GROUP, before, "pairing refused: not_private")
            assert s.gateway.owner is None
            # A malformed code gets no answer either (nothing confirms the bot to a stranger).
            before = len(s.gateway.ignored)
            s.api.push_message(STRANGER, STRANGER, "/pair hello")
            await refused_silently(s, STRANGER, before, "pairing refused: wrong")

            # Positive control: the same code from the owner's private chat pairs.
            s.api.push_message(OWNER_CHAT, OWNER_USER, f"/pair {code}")
            await s.api.signal.until(lambda: len(s.api.texts_to(OWNER_CHAT)) == 1)
            assert s.api.texts_to(OWNER_CHAT)[0].startswith("Paired.")
            assert s.gateway.owner is not None and s.gateway.owner.chat_id == OWNER_CHAT

            # Paired: a stranger's /pair (even with a well-formed code) gets silence.
            before = len(s.gateway.ignored)
            s.api.push_message(STRANGER, STRANGER, f"/pair {code}", username="mallory")
            await refused_silently(s, STRANGER, before, "pairing refused: taken")
            assert s.gateway.owner.chat_id == OWNER_CHAT
            # The owner's own /pair is answered; the owner is still served.
            await s.owner_says(f"/pair {code}")
            assert s.last_to_owner()["text"] == "This chat is already paired with MAMA."
            await s.owner_says("/search anything")
            assert s.last_to_owner()["text"] == "Nothing found."

    asyncio.run(scenario())


def test_a_group_paired_by_an_older_version_is_not_served(engine: Engine, store: Store) -> None:
    db = RuntimeDb(store.new_connection(), store.path)
    with db.write() as conn:  # what the old code let a group do
        write_owner(conn, GROUP, OWNER_USER, "group", "2026-01-01T00:00:00.000000Z")
    db.close()

    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            before = len(s.gateway.ignored)
            s.api.push_message(GROUP, OWNER_USER, "/remember fact from the group")
            await refused_silently(s, GROUP, before, "not the paired owner")
            # Positive control: once unpaired, the owner's private chat pairs and is served.
            await s.gateway.unpair()
            await s.pair()
            await s.owner_says("/search anything")
            assert s.last_to_owner()["text"] == "Nothing found."

    asyncio.run(scenario())


def test_guessing_codes_is_locked_out_per_chat(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            code = await s.runtime.run_db(s.gateway.pairing.new_code)
            for n in range(1, MAX_WRONG_CODES + 1):
                s.api.push_message(STRANGER, STRANGER, "/pair ABCD-EFGH")
                await s.api.signal.until(lambda n=n: len(s.api.texts_to(STRANGER)) == n)
            answers = s.api.texts_to(STRANGER)
            assert answers[:-1] == ["That pairing code is wrong or has expired."] * (
                MAX_WRONG_CODES - 1
            )
            assert answers[-1].startswith("Too many wrong codes from this chat.")
            # Locked out: the right code is refused too.
            s.api.push_message(STRANGER, STRANGER, f"/pair {code}")
            await s.api.signal.until(lambda: len(s.api.texts_to(STRANGER)) > MAX_WRONG_CODES)
            assert s.api.texts_to(STRANGER)[-1].startswith("Too many wrong codes")
            assert s.gateway.owner is None
            # Positive control: another chat is not locked out and pairs with that code.
            await s.pair_with(code)
            assert s.gateway.owner is not None and s.gateway.owner.chat_id == OWNER_CHAT

    asyncio.run(scenario())


def test_the_tray_unpairs_and_the_old_chat_is_told(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            old = await s.gateway.unpair()
            assert old is not None and old.chat_id == OWNER_CHAT
            assert s.api.texts_to(OWNER_CHAT)[-1] == UNPAIRED_NOTICE
            assert s.gateway.owner is None
            # Positive control: a new code pairs another chat now.
            code = await s.runtime.run_db(s.gateway.pairing.new_code)
            s.api.push_message(STRANGER, STRANGER, f"/pair {code}", username="new-phone")
            await s.api.signal.until(lambda: len(s.api.texts_to(STRANGER)) == 1)
            assert s.api.texts_to(STRANGER)[0].startswith("Paired.")

    asyncio.run(scenario())


@pytest.mark.slow
def test_mama_telegram_unpair_stops_the_running_bot_serving_the_old_chat(
    engine: Engine, store: Store, db_path: Path, model_cache_dir: Path
) -> None:
    async def mama(env: dict[str, str], *args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            str(MAMA),
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            env = mama_env(
                db_path.parent,
                model_cache_dir,
                MAMA_TELEGRAM_TOKEN=s.api.token,
                MAMA_TELEGRAM_API_URL=s.api.url,
            )
            await s.pair()
            # While paired no code is made: a takeover needs the owner to unpair first.
            rc, _, err = await mama(env, "telegram", "pair-code")
            assert rc == 54 and "already_paired" in err

            rc, out, err = await mama(env, "telegram", "unpair", "--json")
            assert rc == 0, err
            result = json.loads(out)
            assert result == {
                "unpaired": True,
                "chat_id": OWNER_CHAT,
                "username": "owner",
                "notified": True,
            }
            assert s.api.texts_to(OWNER_CHAT)[-1] == UNPAIRED_NOTICE
            # The running bot follows the store: the old chat is not served any more.
            before = len(s.gateway.ignored)
            sent = len(s.api.sent)
            s.api.push_message(OWNER_CHAT, OWNER_USER, "/remember fact still the owner?")
            await s.api.signal.until(lambda: len(s.gateway.ignored) > before)
            assert s.gateway.ignored[-1].reason == "not the paired owner"
            assert len(s.api.sent) == sent

            # Positive control: a code from the CLI now pairs a new chat.
            rc, out, err = await mama(env, "telegram", "pair-code")
            assert rc == 0, err
            code = next(li for li in out.splitlines() if li.startswith("/pair ")).split()[1]
            s.api.push_message(STRANGER, STRANGER, f"/pair {code}", username="new-phone")
            await s.api.signal.until(lambda: len(s.api.texts_to(STRANGER)) == 1)
            assert s.api.texts_to(STRANGER)[0].startswith("Paired.")

            rc, out, _ = await mama(env, "telegram", "unpair")
            assert rc == 0 and out.startswith("Unpaired @new-phone; told it so.")

    asyncio.run(scenario())
