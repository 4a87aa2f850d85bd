"""``app.admin.connectors.list_choices``: what Settings offers to pick, read live from the
source with the credentials being typed (the real slack-sdk against the fake Web API)."""

from __future__ import annotations

import asyncio

import pytest

from app.admin.connectors import ConnectorFailedError, ConnectorKindError, list_choices
from tests.app.connectors.fake_slack import FakeSlack


def test_slack_offers_every_channel_the_token_can_list() -> None:
    async def scenario() -> None:
        fake = FakeSlack()
        await fake.start()
        try:
            fake.add_channel("general")
            fake.add_channel("eng", private=True)
            token = {"token": fake.token}.get
            choices = await list_choices("slack", {"base_url": fake.url}, token, "team")
            assert choices == ["#eng", "#general"]
            fake.revoked = True  # the same call with a revoked token: one line, a code
            with pytest.raises(ConnectorFailedError) as refused:
                await list_choices("slack", {"base_url": fake.url}, token, "team")
            assert refused.value.details["problem"] == "invalid_auth"
            assert refused.value.message.startswith("team: invalid_auth: ")
        finally:
            await fake.stop()

    asyncio.run(scenario())


def test_mail_has_nothing_to_pick_from_a_list() -> None:
    with pytest.raises(ConnectorKindError):
        asyncio.run(list_choices("mail", {}, lambda _key: None))
