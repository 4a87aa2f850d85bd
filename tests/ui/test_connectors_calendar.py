"""Settings' Connectors page adds a calendar: from a CalDAV server (url, user, password)
or from a secret iCalendar address (the address as the secret, kept in the keyring and
in no file) — tested against an ``.ics`` served on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.store import Store
from tests.app.connectors import calendar_data as data
from tests.app.connectors.calendar_servers import IcsFile
from tests.ui.test_connectors_page import act
from tests.ui.test_settings import MemoryKeyring, memory_keyring
from ui.settings.flow import settings_dialog

__all__ = ["memory_keyring"]


@pytest.fixture
def ics() -> Iterator[IcsFile]:
    served = IcsFile(data.week_in_one())
    yield served
    served.close()


def test_a_calendar_is_added_from_caldav_or_a_secret_address(
    paths: Paths,
    store: Store,
    loop: asyncio.AbstractEventLoop,
    qtbot: Any,
    ics: IcsFile,
    memory_keyring: MemoryKeyring,
) -> None:
    paths.home.mkdir(parents=True, exist_ok=True)

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, Settings(), paths.home, settings_path=paths.settings, store=store
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None
        page.kind.setCurrentIndex(page.kind.findData("calendar"))
        # CalDAV first: the server, the user, the calendars (with Choose…) and a password.
        assert page.shown_fields() == (["url", "username", "calendars"], ["password"])

        page.calendar_source.setCurrentIndex(page.calendar_source.findData("ics"))
        assert page.shown_fields() == (["name"], ["ics_url"])
        page.name.setText("google")
        page.secret_field("ics_url").setText(ics.url)
        await act(page, page.add_button)
        assert page.status.property("error") is False, page.status.text()
        saved = Settings.load(paths.settings).connector("google")
        assert saved is not None and saved.kind == "calendar" and saved.options == {}
        assert memory_keyring.secrets[("mama", "connector:google:ics_url")] == ics.url
        assert "private-5ecret" not in paths.settings.read_text("utf-8")

        await act(page, page.test_button)
        line = page.status.text()
        assert line.startswith(
            "Test passed: google: iCalendar address at 127.0.0.1 as anna@corp.example: "
            "1 calendar(s): Anna's calendar;"
        ), line
        assert "private-5ecret" not in line

    loop.run_until_complete(scenario())
