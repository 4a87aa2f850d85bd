"""The Slack connector, driving the real slack-sdk client against a fake Web API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from app.connectors.base import Batch, ConnectorError, Item, Problem
from app.connectors.slack import OPTIONS_HELP, SlackConnector, SlackOptions, build
from app.connectors.slack_text import mentioned_users, render
from app.durable.connector_store import ConnectorStore
from app.durable.transaction import RuntimeDb
from tests.app.connectors.fake_slack import FakeSlack

DAY = 86_400.0
Scenario = Callable[[FakeSlack], Awaitable[None]]


def run(scenario: Scenario) -> None:
    async def main() -> None:
        fake = FakeSlack()
        await fake.start()
        try:
            await scenario(fake)
        finally:
            await fake.stop()

    asyncio.run(main())


def connect(fake: FakeSlack, channels: list[str], **options: Any) -> SlackConnector:
    secrets = {"token": fake.token}
    return build("work-slack", {"channels": channels, "base_url": fake.url, **options}, secrets.get)


def workspace(fake: FakeSlack) -> str:
    fake.add_user("U1", display_name="Ana", real_name="Ana Lima")
    fake.add_user("U2", real_name="Bruno Costa")
    return fake.add_channel("general")


async def drain(
    connector: SlackConnector, cursor: str | None, limit: int
) -> tuple[list[Item], str]:
    """Poll until ``more`` is False; every batch within ``limit``."""
    items: list[Item] = []
    for _ in range(100):
        batch = await connector.poll(cursor, limit)
        assert len(batch.items) <= limit
        items.extend(batch.items)
        cursor = batch.cursor
        if not batch.more:
            return items, cursor
    raise AssertionError("the connector kept saying more=True")


def texts(items: list[Item] | tuple[Item, ...]) -> list[str]:
    return [i.text for i in items]


def one_line(error: ConnectorError) -> str:
    message = str(error)
    assert "\n" not in message and "Traceback" not in message
    return message


# --- reading -----------------------------------------------------------------


def test_three_pages_give_every_message_once_in_order() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        posted = [fake.post(general, "U1", f"m{i}", ago=3600 - i) for i in range(6)]
        connector = connect(fake, ["#general"], page_size=2)
        try:
            batch = await connector.poll(None, 100)
        finally:
            await connector.aclose()
        assert texts(batch.items) == [f"m{i}" for i in range(6)]
        assert [i.external_id for i in batch.items] == [f"{general}/{ts}" for ts in posted]
        assert fake.count("conversations.history") == 3  # three pages of two
        paged = [c.params.get("cursor") for c in fake.calls if c.method == "conversations.history"]
        assert paged[0] is None and all(paged[1:])
        assert not batch.more
        first = batch.items[0]
        assert first.source == "slack:T0TEST01"
        assert first.channel == "#general"
        assert first.scope == "channel:slack/#general"
        assert first.author == "Ana"
        seconds, micros = posted[0].split(".")
        assert first.at == datetime.fromtimestamp(int(seconds), UTC).replace(
            microsecond=int(micros)
        )
        assert first.at.tzinfo is not None
        assert first.metadata["permalink"] == (
            f"https://acme.slack.com/archives/{general}/p{posted[0].replace('.', '')}"
        )
        json.dumps(dict(first.metadata))  # JSON-serialisable, as the runtime stores it

    run(scenario)


def test_second_poll_from_the_cursor_returns_only_new_messages() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        for i in range(3):
            fake.post(general, "U1", f"old {i}", ago=600 - i)
        connector = connect(fake, ["#general"], page_size=2)
        try:
            first = await connector.poll(None, 100)
            assert texts(first.items) == ["old 0", "old 1", "old 2"]
            fake.post(general, "U2", "new one")
            second = await connector.poll(first.cursor, 100)
            assert texts(second.items) == ["new one"]  # the new one comes, no old one again
            third = await connector.poll(second.cursor, 100)
            assert third.items == ()
            assert json.loads(third.cursor)["channels"][general] == second.items[0].metadata["ts"]
        finally:
            await connector.aclose()
        assert fake.count("conversations.list") == 1  # names resolved once per connector

    run(scenario)


def test_new_replies_are_read_for_parents_inside_the_window_only() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        ancient = fake.post(general, "U1", "ten days old", ago=10 * DAY)
        recent = fake.post(general, "U1", "two days old", ago=2 * DAY)
        busy = fake.post(general, "U2", "already a thread", ago=DAY)
        fake.reply(general, busy, "U1", "early reply", ago=DAY - 60)
        connector = connect(fake, ["#general"], thread_lookback_days=7)
        try:
            first = await connector.poll(None, 100)
            # The first poll reads the window: the ten-day-old parent is outside it.
            assert texts(first.items) == ["two days old", "already a thread", "early reply"]
            fake.reply(general, ancient, "U2", "late reply to an ancient parent")
            fake.reply(general, recent, "U2", "late reply to a recent parent")
            fake.reply(general, busy, "U2", "second reply")
            second = await connector.poll(first.cursor, 100)
            assert texts(second.items) == ["late reply to a recent parent", "second reply"]
            reply = second.items[0]
            assert reply.metadata["thread_ts"] == recent
            assert f"thread_ts={recent}" in reply.metadata["permalink"]
            third = await connector.poll(second.cursor, 100)
            assert third.items == ()  # read replies are not read again
        finally:
            await connector.aclose()
        asked = [c.params["ts"] for c in fake.calls if c.method == "conversations.replies"]
        assert ancient not in asked

    run(scenario)


def test_bots_joins_and_edits_skipped_beside_a_person_kept() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "<@U1> has joined the channel", ago=60, subtype="channel_join")
        fake.post(general, None, "deploy finished", ago=59, subtype="bot_message", bot_id="B9")
        alert = fake.post(general, "U2", "app post", ago=58, bot_id="B9", app_id="A1")
        fake.post(general, "U2", "left", ago=57, subtype="channel_leave")
        fake.post(general, "U2", "set the topic", ago=56, subtype="channel_topic")
        fake.post(general, "U1", "a person speaking", ago=55)
        fake.post(
            general,
            "U2",
            "here is the plan",
            ago=54,
            subtype="file_share",
            files=[{"id": "F1", "name": "plan.pdf", "size": 12345}],
        )
        fake.reply(general, alert, "U1", "a person answering the bot", ago=50)
        connector = connect(fake, ["general"])
        try:
            batch = await connector.poll(None, 100)
        finally:
            await connector.aclose()
        assert texts(batch.items) == [
            "a person speaking",
            "here is the plan",
            "a person answering the bot",
        ]
        assert batch.items[1].metadata["files"] == [{"name": "plan.pdf", "size": 12345}]

    run(scenario)


def test_names_resolved_once_per_user_with_fallbacks() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "one", ago=50)
        fake.post(general, "U2", "two, cc <@U1>", ago=49)
        fake.post(general, "U1", "three", ago=48)
        fake.post(general, "U404", "from a stranger", ago=47)
        crowd = " ".join(f"<@UX{i:04d}>" for i in range(100))
        fake.post(general, "U2", f"hi {crowd}", ago=46)
        connector = connect(fake, ["#general"])
        try:
            first = await connector.poll(None, 100)
            authors = [i.author for i in first.items]
            assert authors == ["Ana", "Bruno Costa", "Ana", "U404", "Bruno Costa"]
            assert first.items[1].text == "two, cc @Ana"
            assert first.items[4].text.startswith("hi @UX0000 @UX0001")
            # U1, U2, U404, and 20 of the 100 mentioned (the cap per message)
            assert fake.count("users.info", error=None) == 23
            fake.post(general, "U2", "four")
            second = await connector.poll(first.cursor, 100)
            assert [i.author for i in second.items] == ["Bruno Costa"]
        finally:
            await connector.aclose()
        assert fake.count("users.info", error=None) == 23  # cached across polls

    run(scenario)


def test_markup_made_readable_and_long_text_capped() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        random = fake.add_channel("random")
        fake.post(
            general,
            "U2",
            f"<@U1> see <#{random}|random> and <#{random}>,"
            " <https://x.example/a?b=1&amp;c=2|the doc> or <https://x.example/raw>"
            " &lt;3 &amp; <!here> mail <mailto:a@b.example|a@b.example>"
            " typed &lt;@U1&gt;",
            ago=30,
        )
        fake.post(general, "U1", "x" * 25_000, ago=20)
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 100)
        finally:
            await connector.aclose()
        assert batch.items[0].text == (
            "@Ana see #random and #random, the doc (https://x.example/a?b=1&c=2)"
            " or https://x.example/raw <3 & @here mail a@b.example typed <@U1>"
        )
        long = batch.items[1].text
        assert long.startswith("x" * 20_000)
        assert long.endswith("[cut: 5000 more characters]")
        assert len(long) < 20_100

    run(scenario)


@pytest.mark.parametrize("newest_pages_first", [False, True])
def test_limit_splits_polls_without_losing_or_repeating_an_item(newest_pages_first: bool) -> None:
    async def scenario(fake: FakeSlack) -> None:
        fake.newest_pages_first = newest_pages_first
        general = workspace(fake)
        random = fake.add_channel("random")
        expected: list[str] = []
        for i in range(7):
            fake.post(general, "U1", f"g{i}", ago=900 - i)
            expected.append(f"g{i}")
        parent = fake.post(general, "U2", "parent", ago=800)
        expected.append("parent")
        for i in range(5):
            fake.reply(general, parent, "U1", f"r{i}", ago=700 - i)
            expected.append(f"r{i}")
        fake.post(general, "U1", "joined", ago=650, subtype="channel_join")
        for i in range(4):
            fake.post(random, "U2", f"x{i}", ago=600 - i)
            expected.append(f"x{i}")
        for limit in (1, 2, 4, 5, 8):  # every split point falls somewhere else
            whole = connect(fake, ["#general", "#random"], page_size=2)
            try:
                got, _ = await drain(whole, None, limit)
            finally:
                await whole.aclose()
            assert sorted(texts(got)) == sorted(expected), limit
            assert len({i.external_id for i in got}) == len(got), limit
        connector = connect(fake, ["#general", "#random"], page_size=2)
        try:
            batch = await connector.poll(None, 3)
            assert len(batch.items) == 3 and batch.more
            # The cursor resumes right after the last item returned.
            assert json.loads(batch.cursor)["channels"][general] == batch.items[-1].metadata["ts"]
            items, cursor = await drain(connector, batch.cursor, 3)
            items = list(batch.items) + items
            assert sorted(texts(items)) == sorted(expected)
            assert len({i.external_id for i in items}) == len(items)
            fake.post(random, "U1", "after the split")
            later, _ = await drain(connector, cursor, 3)
            assert texts(later) == ["after the split"]
        finally:
            await connector.aclose()

    run(scenario)


def test_a_broadcast_reply_is_one_item() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        parent = fake.post(general, "U1", "question", ago=100)
        fake.reply(general, parent, "U2", "answer for all", ago=50, broadcast=True)
        fake.reply(general, parent, "U1", "thanks", ago=40)
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 100)
        finally:
            await connector.aclose()
        assert texts(batch.items) == ["question", "answer for all", "thanks"]

    run(scenario)


# --- rate limits ----------------------------------------------------------------


def test_a_short_429_is_waited_out_then_the_poll_succeeds() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "hello", ago=10)
        fake.fail_next(
            "conversations.history", "ratelimited", status=429, headers={"Retry-After": "0"}
        )
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 100)
        finally:
            await connector.aclose()
        assert texts(batch.items) == ["hello"]
        assert fake.count("conversations.history", status=429, error=None) == 1
        assert fake.count("conversations.history") == 1

    run(scenario)


def test_a_long_429_goes_back_to_the_runtime_with_retry_after() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "hello", ago=10)
        fake.fail_next(
            "conversations.history", "ratelimited", status=429, headers={"Retry-After": "120"}
        )
        connector = connect(fake, ["#general"])
        try:
            with pytest.raises(ConnectorError) as caught:
                await connector.poll(None, 100)
            assert caught.value.problem is Problem.RATE_LIMITED
            assert caught.value.retry_after == 120
            assert not caught.value.owner_must_act
            assert "120" in one_line(caught.value)
            batch = await connector.poll(None, 100)  # once Slack lets us, it reads
            assert texts(batch.items) == ["hello"]
        finally:
            await connector.aclose()

    run(scenario)


# --- errors the owner sees ----------------------------------------------------


async def failure(connector: SlackConnector, call: str = "poll") -> ConnectorError:
    try:
        if call == "poll":
            await connector.poll(None, 100)
        else:
            await connector.check()
    except ConnectorError as error:
        return error
    finally:
        await connector.aclose()
    raise AssertionError("no ConnectorError")


@pytest.mark.parametrize("how", ["wrong token", "revoked", "not_authed"])
def test_auth_errors_are_one_clear_line(how: str) -> None:
    async def scenario(fake: FakeSlack) -> None:
        workspace(fake)
        token = fake.token
        if how == "wrong token":
            token = "xoxb-wrong-token"
        elif how == "revoked":
            fake.revoked = True
        else:
            fake.fail_next("auth.test", "not_authed")
        connector = build(
            "work-slack",
            {"channels": ["#general"], "base_url": fake.url},
            {"token": token}.get,
        )
        error = await failure(connector)
        assert error.problem is Problem.AUTH and error.owner_must_act
        message = one_line(error)
        assert {"wrong token": "invalid_auth", "revoked": "token_revoked"}.get(
            how, "not_authed"
        ) in message
        assert token not in message
        # Positive control: the right token reads.
        fake.revoked = False
        good = connect(fake, ["#general"])
        try:
            assert (await good.poll(None, 10)).items == ()
        finally:
            await good.aclose()

    run(scenario)


def test_missing_scope_names_the_scope_needed() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "hello", ago=10)
        fake.fail_next(
            "conversations.history",
            "missing_scope",
            needed="channels:history",
            provided="channels:read",
        )
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.PERMISSION
        assert "channels:history" in one_line(error)
        fake.fail_next("users.info", "missing_scope", needed="users:read", provided="")
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.PERMISSION and "users:read" in one_line(error)
        fake.fail_next("conversations.history", "not_in_channel")
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.PERMISSION
        assert "#general" in one_line(error) and "invite" in one_line(error)
        assert fake.count("conversations.history") == 1  # the same path, working

    run(scenario)


def test_a_channel_that_does_not_exist_is_named() -> None:
    async def scenario(fake: FakeSlack) -> None:
        workspace(fake)
        by_id = await failure(connect(fake, ["C0GONE0001"]))
        assert by_id.problem is Problem.NOT_FOUND and "C0GONE0001" in one_line(by_id)
        assert fake.calls[-1].error == "channel_not_found"
        by_id_check = await failure(connect(fake, ["#general", "C0GONE0001"]), call="check")
        assert by_id_check.problem is Problem.NOT_FOUND and "C0GONE0001" in one_line(by_id_check)
        by_name = await failure(connect(fake, ["#nope"]), call="check")
        assert by_name.problem is Problem.NOT_FOUND and "#nope" in one_line(by_name)
        fake.add_channel("later", channel_id="C0LATER001")
        fake.post("C0LATER001", "U1", "found by id", ago=5)
        connector = connect(fake, ["C0LATER001"])
        try:
            summary = await connector.check()
            batch = await connector.poll(None, 10)
        finally:
            await connector.aclose()
        assert "#later" in summary and "Acme" in summary and "\n" not in summary
        assert [(i.channel, i.text) for i in batch.items] == [("#later", "found by id")]

    run(scenario)


def test_a_deleted_channel_between_polls_is_named() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 10)
            fake.fail_next("conversations.history", "channel_not_found")
            with pytest.raises(ConnectorError) as caught:
                await connector.poll(batch.cursor, 10)
            assert caught.value.problem is Problem.NOT_FOUND
            assert "#general" in one_line(caught.value)
            fake.post(general, "U1", "back")
            assert texts((await connector.poll(batch.cursor, 10)).items) == ["back"]
        finally:
            await connector.aclose()

    run(scenario)


def test_network_and_server_failures_are_unavailable() -> None:
    async def scenario(fake: FakeSlack) -> None:
        workspace(fake)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
        nobody = build(
            "work-slack",
            {"channels": ["#general"], "base_url": f"http://127.0.0.1:{closed}/api/"},
            {"token": fake.token}.get,
        )
        error = await failure(nobody)
        assert error.problem is Problem.UNAVAILABLE and not error.owner_must_act
        assert f"127.0.0.1:{closed}" in one_line(error)
        fake.fail_next("auth.test", "internal_error", status=500)
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.UNAVAILABLE and "internal_error" in one_line(error)
        fake.garble_next("auth.test", '{"ok": tru')
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.UNAVAILABLE
        one_line(error)
        fake.garble_next("auth.test", "<html>Gateway</html>", status=502, content_type="text/html")
        error = await failure(connect(fake, ["#general"]))
        assert error.problem is Problem.UNAVAILABLE and "502" in one_line(error)
        fine = connect(fake, ["#general"])  # positive control: the same call, answered
        try:
            assert "Acme" in await fine.check()
        finally:
            await fine.aclose()

    run(scenario)


def test_settings_problems_are_config_errors() -> None:
    def token(_: str) -> str | None:
        return "xoxb-x"

    with pytest.raises(ConnectorError) as caught:
        build("s", {"channels": ["#general"]}, lambda _: None)
    assert caught.value.problem is Problem.CONFIG and "token" in one_line(caught.value)
    for bad in (
        {},
        {"channels": []},
        {"channels": ["#general"], "base_url": "ftp://x"},
        {"channels": ["#general"], "colour": "red"},
        {"channels": ["#general"], "page_size": 0},
    ):
        with pytest.raises(ConnectorError) as caught:
            build("s", bad, token)
        assert caught.value.problem is Problem.CONFIG
        one_line(caught.value)
    connector = build("s", {"channels": ["#general"]}, token)
    assert connector.kind == "slack" and connector.name == "s"
    assert set(OPTIONS_HELP) >= {"channels", "base_url", "thread_lookback_days", "poll_limit"}

    async def unreadable_cursor() -> None:
        try:
            with pytest.raises(ConnectorError) as caught:
                await connector.poll("not json", 10)
            assert caught.value.problem is Problem.CONFIG
        finally:
            await connector.aclose()

    asyncio.run(unreadable_cursor())


def test_batches_have_the_shape_the_runtime_stores() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "hi", ago=5)
        connector = connect(fake, ["#general"], poll_limit=1)
        try:
            batch = await connector.poll(None, 50)  # poll_limit caps below the runtime's
            assert isinstance(batch, Batch) and len(batch.items) == 1
            assert isinstance(batch.cursor, str) and json.loads(batch.cursor)["v"] == 1
        finally:
            await connector.aclose()

    run(scenario)


def test_without_groups_read_the_public_channels_still_resolve() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "public words", ago=5)
        fake.fail_next("conversations.list", "missing_scope", needed="groups:read")
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 10)
        finally:
            await connector.aclose()
        assert texts(batch.items) == ["public words"]
        listed = [c.params.get("types") for c in fake.calls if c.method == "conversations.list"]
        assert listed == ["public_channel,private_channel", "public_channel"]

    run(scenario)


def test_a_thread_deleted_while_waiting_is_dropped_and_the_rest_read() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        parent = fake.post(general, "U1", "parent", ago=100)
        for i in range(3):
            fake.reply(general, parent, "U2", f"r{i}", ago=90 - i)
        connector = connect(fake, ["#general"])
        try:
            first = await connector.poll(None, 2)  # parent and r0; r1, r2 wait
            assert texts(first.items) == ["parent", "r0"] and first.more
            fake.messages[general].clear()  # the parent is deleted with its thread
            fake.post(general, "U1", "still here")
            second = await connector.poll(first.cursor, 10)
        finally:
            await connector.aclose()
        assert texts(second.items) == ["still here"]
        assert fake.count("conversations.replies", error="thread_not_found") == 1
        assert json.loads(second.cursor)["threads"] == {}

    run(scenario)


def test_markup_edge_cases_render_as_slack_shows_them() -> None:
    names = {"U1": "Ana"}
    text = (
        "<!subteam^S1|@design> <!date^1700000000^{date}|Nov 14> <#C9> <@U1|ana.l> <@U7>"
        " <https://a.example|https://a.example> a &amp;lt; b"
    )
    assert render(text, lambda u: names.get(u, u), {}) == (
        "@design Nov 14 #C9 @ana.l @U7 https://a.example a &lt; b"
    )
    assert mentioned_users("<@U1> <@U2|bo> <@U1> <@U3>") == ["U1", "U3"]


def scans(fake: FakeSlack) -> int:
    """Reads of the look-back window (history with ``latest``), counted by first page."""
    return sum(
        1
        for c in fake.calls
        if c.method == "conversations.history" and "latest" in c.params and "cursor" not in c.params
    )


def test_a_run_of_more_polls_scans_the_window_once() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        parent = fake.post(general, "U1", "old parent", ago=DAY)
        connector = connect(fake, ["#general"], page_size=2)
        try:
            first = await connector.poll(None, 100)
            assert texts(first.items) == ["old parent"]
            for i in range(6):
                fake.post(general, "U2", f"n{i}")
            fake.reply(general, parent, "U2", "late reply")
            scans_before = scans(fake)
            items, _ = await drain(connector, first.cursor, 2)
        finally:
            await connector.aclose()
        assert texts(items) == [f"n{i}" for i in range(6)] + ["late reply"]
        assert scans(fake) - scans_before == 1

    run(scenario)


def test_with_no_look_back_the_first_poll_starts_now_and_misses_nothing_after() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        fake.post(general, "U1", "before the connector", ago=60)
        now = [time.time()]
        options = SlackOptions(channels=("#general",), base_url=fake.url, thread_lookback_days=0)
        connector = SlackConnector("work-slack", options, fake.token, clock=lambda: now[0])
        try:
            first = await connector.poll(None, 10)
            assert first.items == ()
            fake.post(general, "U1", "after the first poll", ago=-5)
            now[0] += 100  # the next poll comes well after it
            second = await connector.poll(first.cursor, 10)
        finally:
            await connector.aclose()
        assert texts(second.items) == ["after the first poll"]

    run(scenario)


# --- edits and deletions after a message was read --------------------------------


def test_an_edit_after_reading_is_a_new_item_that_revises_the_first() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        said = fake.post(general, "U1", "ship on Friday", ago=600)
        kept = fake.post(general, "U2", "lunch?", ago=500)
        connector = connect(fake, ["#general"])
        try:
            first = await connector.poll(None, 100)
            fake.edit(general, said, "ship on Monday, not Friday")
            fake.edit(general, kept, "lunch?")  # same text (a link preview): no new item
            second = await connector.poll(first.cursor, 100)
            third = await connector.poll(second.cursor, 100)
        finally:
            await connector.aclose()
        assert texts(first.items) == ["ship on Friday", "lunch?"]
        assert texts(second.items) == ["ship on Monday, not Friday"]
        edit = second.items[0]
        assert edit.metadata["revises"] == first.items[0].external_id == f"{general}/{said}"
        assert edit.metadata["subtype"] == "message_changed"
        assert edit.external_id.startswith(f"{general}/{said}/edit/")
        assert edit.author == "Ana" and edit.scope == "channel:slack/#general"
        assert edit.at > first.items[0].at
        json.dumps(dict(edit.metadata))
        assert third.items == ()  # read once

    run(scenario)


def test_a_deletion_after_reading_is_recorded_as_a_new_item() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        parent = fake.post(general, "U1", "thread start", ago=900)
        gone = fake.post(general, "U2", "wrong channel, sorry", ago=800)
        reply = fake.reply(general, parent, "U2", "a reply I regret", ago=700)
        connector = connect(fake, ["#general"])
        try:
            first = await connector.poll(None, 100)
            fake.delete(general, gone)
            fake.delete(general, reply)
            fake.post(general, "U1", "still here", ago=0)
            second = await connector.poll(first.cursor, 100)
        finally:
            await connector.aclose()
        assert texts(first.items) == ["thread start", "wrong channel, sorry", "a reply I regret"]
        assert texts(second.items) == ["(deleted in Slack)", "(deleted in Slack)", "still here"]
        deleted = {i.metadata["deletes"]: i for i in second.items[:2]}
        assert set(deleted) == {f"{general}/{gone}", f"{general}/{reply}"}
        assert deleted[f"{general}/{gone}"].author == "Bruno Costa"
        assert deleted[f"{general}/{gone}"].external_id == f"{general}/{gone}/deleted"

    run(scenario)


def test_a_thread_parent_deleted_as_a_tombstone_is_a_deletion() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        parent = fake.post(general, "U1", "the plan, in a thread", ago=900)
        fake.reply(general, parent, "U2", "agreed", ago=800)
        connector = connect(fake, ["#general"])
        try:
            first = await connector.poll(None, 100)
            fake.delete(general, parent)
            second = await connector.poll(first.cursor, 100)
        finally:
            await connector.aclose()
        assert texts(first.items) == ["the plan, in a thread", "agreed"]
        assert texts(second.items) == ["(deleted in Slack)"]
        assert second.items[0].metadata["deletes"] == f"{general}/{parent}"
        assert second.items[0].author == "Ana"

    run(scenario)


def test_changes_to_messages_older_than_the_window_or_by_bots_are_not_followed() -> None:
    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        old = fake.post(general, "U1", "from last month", ago=30 * DAY)
        bot = fake.post(general, None, "build green", ago=60, subtype="bot_message", bot_id="B9")
        recent = fake.post(general, "U1", "from today", ago=60)
        connector = connect(fake, ["#general"], thread_lookback_days=7)
        try:
            first = await connector.poll(None, 100)
            fake.edit(general, old, "from last month, edited")
            fake.edit(general, bot, "build red")
            fake.delete(general, old)
            fake.edit(general, recent, "from today, edited")  # the control: followed
            second = await connector.poll(first.cursor, 100)
        finally:
            await connector.aclose()
        assert texts(first.items) == ["from today"]
        assert texts(second.items) == ["from today, edited"]

    run(scenario)


def test_an_edit_and_a_deletion_stored_beside_the_original_which_stays(app_db: RuntimeDb) -> None:
    """Observations are immutable: the store keeps what was read, and the edit and the
    deletion as observations of their own that name it."""
    connectors = ConnectorStore(app_db)

    async def scenario(fake: FakeSlack) -> None:
        general = workspace(fake)
        said = fake.post(general, "U1", "the budget is 10k", ago=600)
        connector = connect(fake, ["#general"])
        try:
            batch = await connector.poll(None, 100)
            connectors.store_batch("work-slack", "slack", batch)
            fake.edit(general, said, "the budget is 12k")
            batch = await connector.poll(batch.cursor, 100)
            connectors.store_batch("work-slack", "slack", batch)
            fake.delete(general, said)
            batch = await connector.poll(batch.cursor, 100)
            connectors.store_batch("work-slack", "slack", batch)
        finally:
            await connector.aclose()

    run(scenario)
    with app_db.read() as conn:
        rows = conn.execute(
            "SELECT o.text, f.metadata FROM observations o "
            "JOIN observation_facets f ON f.observation_id = o.id ORDER BY o.id"
        ).fetchall()
    assert [r[0] for r in rows] == ["the budget is 10k", "the budget is 12k", "(deleted in Slack)"]
    original = json.loads(rows[0][1])
    assert "revises" not in original and "deletes" not in original
    named = f"{original['channel_id']}/{original['ts']}"
    assert json.loads(rows[1][1])["revises"] == named
    assert json.loads(rows[2][1])["deletes"] == named
