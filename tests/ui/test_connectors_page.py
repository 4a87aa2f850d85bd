"""Settings' Connectors page against the fake Trello: add (secrets to the keyring), Test
(ok, and a refused key as one clear line), pause and resume, remove with a confirm —
each checked in the settings file, the keyring and the store, not only in widgets."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.admin.connectors import open_connector_store, poll_connector
from app.local.paths import Paths
from app.local.settings import ConnectorConfig, Settings
from mama_core.store import Store
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.ui.conftest import save_artifact, wait_signal
from tests.ui.test_settings import MemoryKeyring, memory_keyring
from ui.qt import QtWidgets
from ui.settings.connectors_page import ConnectorsPage
from ui.settings.flow import settings_dialog

__all__ = ["memory_keyring"]


@pytest.fixture
def fake() -> Iterator[FakeTrello]:
    server = FakeTrello()
    server.add_card_moves(server.add_board("Roadmap"), 3)
    yield server
    server.close()


async def act(page: ConnectorsPage, button: QtWidgets.QPushButton) -> None:
    """Click ``button`` and wait until the page says its action finished."""
    done = asyncio.ensure_future(wait_signal(page.changed, 30))
    button.click()
    await done


async def answer_remove(page: ConnectorsPage, yes: bool) -> None:
    """Click Remove… and answer its confirmation."""
    opened = asyncio.ensure_future(wait_signal(page.confirm_opened))
    done = asyncio.ensure_future(wait_signal(page.changed, 30))
    page.remove_button.click()
    (box,) = await opened
    assert "stays in the memory until you purge it" in box.text()
    std = QtWidgets.QMessageBox.StandardButton
    box.button(std.Yes if yes else std.Cancel).click()
    await done


def fill_trello(page: ConnectorsPage, name: str, url: str, token: str) -> None:
    page.kind.setCurrentIndex(page.kind.findData("trello"))
    page.name.setText(name)
    page.option_field("boards").setText("Roadmap")
    page.option_field("base_url").setText(url)
    page.secret_field("api_key").setText(API_KEY)
    page.secret_field("token").setText(token)


def observation_count(store: Store) -> int:
    with open_connector_store(store) as connectors, connectors.db.read() as conn:
        return int(conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0])


def test_add_test_pause_and_remove_a_trello_connector(
    paths: Paths,
    store: Store,
    loop: asyncio.AbstractEventLoop,
    qtbot: Any,
    fake: FakeTrello,
    memory_keyring: MemoryKeyring,
) -> None:
    url = fake.serve()
    paths.home.mkdir(parents=True, exist_ok=True)

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, Settings(), paths.home, settings_path=paths.settings, store=store
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None
        assert not page.empty.isHidden() and page.table.isHidden()  # the empty state

        fill_trello(page, "work", url, TOKEN)
        await act(page, page.add_button)
        assert page.status.property("error") is False, page.status.text()
        saved = Settings.load(paths.settings).connector("work")
        assert saved is not None and saved.kind == "trello"
        assert saved.options == {"boards": ["Roadmap"], "base_url": url}
        assert memory_keyring.secrets[("mama", "connector:work:api_key")] == API_KEY
        assert memory_keyring.secrets[("mama", "connector:work:token")] == TOKEN
        assert TOKEN not in paths.settings.read_text("utf-8")  # the secret is in no file
        assert page.table.rowCount() == 1 and page.selected_name() == "work"
        # Save keeps what the page did (it does not write the old list back).
        assert [c.name for c in dialog.choice().settings.connectors] == ["work"]

        # Test: the same check as `mama connectors test`, run on the loop.
        before = len(fake.requests)
        tested = asyncio.ensure_future(wait_signal(page.changed, 30))
        page.test_button.click()
        assert page.status.text() == "Testing work…"  # the window is not frozen meanwhile
        assert not page.test_button.isEnabled()
        await tested
        assert page.status.text() == "Test passed: work: Trello as owner: 1 board(s): Roadmap"
        assert page.status.property("error") is False
        assert len(fake.requests) > before  # it did ask the server
        dialog.pages.setCurrentWidget(page)
        dialog.show()
        save_artifact(dialog, "settings-connectors.png")
        assert observation_count(store) == 0  # a test reads nothing into the memory

        # A refused token: one clear line, no traceback.
        fill_trello(page, "broken", url, "wrong-token")
        await act(page, page.add_button)
        assert memory_keyring.secrets[("mama", "connector:broken:token")] == "wrong-token"
        assert page.selected_name() == "broken"
        await act(page, page.test_button)
        line = page.status.text()
        assert line.startswith("Test failed: broken: invalid_auth: "), line
        assert "\n" not in line and "Traceback" not in line
        assert page.status.property("error") is True

        # Pause and resume: kept in the store, where a running MAMA reads it.
        page.select("work")
        await act(page, page.pause_button)
        with open_connector_store(store) as connectors:
            health = connectors.health("work")
        assert health is not None and health.owner_paused
        assert page.pause_button.text() == "Resume"
        await act(page, page.pause_button)
        with open_connector_store(store) as connectors:
            health = connectors.health("work")
        assert health is not None and not health.owner_paused

        # What it read stays after removal: poll once as the runtime would.
        config = Settings.load(paths.settings).connector("work")
        assert config is not None

        def poll() -> dict[str, Any]:
            with open_connector_store(store) as connectors:
                return asyncio.run(poll_connector(config, connectors))

        assert (await asyncio.to_thread(poll))["stored"] == 3
        await page.reload()
        items = page.table.item(0, 3)
        assert items is not None and items.text() == "3"  # the health column shows them

        # Remove: Cancel keeps it (the control), Yes removes it.
        page.select("work")
        await answer_remove(page, yes=False)
        assert Settings.load(paths.settings).connector("work") is not None
        assert ("mama", "connector:work:token") in memory_keyring.secrets
        await answer_remove(page, yes=True)
        assert [c.name for c in Settings.load(paths.settings).connectors] == ["broken"]
        assert ("mama", "connector:work:token") not in memory_keyring.secrets
        assert ("mama", "connector:work:api_key") not in memory_keyring.secrets
        with open_connector_store(store) as connectors:
            assert connectors.cursor("work") is None
        assert observation_count(store) == 3  # its observations stay until purged
        assert "The 3 item(s) it stored stay until you purge them." in page.status.text()
        assert [c.name for c in dialog.choice().settings.connectors] == ["broken"]
        await page.aclose()

    loop.run_until_complete(scenario())


def test_a_bad_connector_is_refused_with_one_line_and_nothing_saved(
    paths: Paths,
    store: Store,
    loop: asyncio.AbstractEventLoop,
    qtbot: Any,
    memory_keyring: MemoryKeyring,
    tmp_path: Path,
) -> None:
    paths.home.mkdir(parents=True, exist_ok=True)

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, Settings(), paths.home, settings_path=paths.settings, store=store
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None
        # Slack without its token: refused before anything is written.
        page.kind.setCurrentIndex(page.kind.findData("slack"))
        page.name.setText("team")
        page.option_field("channels").setText("#general, #launch")
        await act(page, page.add_button)
        assert page.status.property("error") is True
        assert page.status.text() == "team needs its token: type it above."
        assert Settings.load(paths.settings).connectors == ()
        assert memory_keyring.secrets == {}
        # A bad name: the same checks as the CLI's.
        page.name.setText("Team!")
        page.secret_field("token").setText("xoxb-1")
        await act(page, page.add_button)
        assert page.status.text().startswith("Bad name: ")
        assert Settings.load(paths.settings).connectors == ()
        # The control: a good name is added, channels as a list, token in the keyring.
        page.name.setText("team")
        page.secret_field("token").setText("xoxb-1")
        await act(page, page.add_button)
        assert page.status.property("error") is False, page.status.text()
        saved = Settings.load(paths.settings).connector("team")
        assert saved is not None and saved.options == {"channels": ["#general", "#launch"]}
        assert memory_keyring.secrets == {("mama", "connector:team:token"): "xoxb-1"}
        await page.aclose()

    loop.run_until_complete(scenario())


def test_the_page_waits_for_the_memory(
    paths: Paths, loop: asyncio.AbstractEventLoop, qtbot: Any
) -> None:
    kept = ConnectorConfig(name="work", kind="trello", options={"boards": ["Roadmap"]})
    before = Settings(connectors=(kept,))

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, before, paths.home, settings_path=paths.settings, store=None
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None and not page.isEnabled()
        assert page.status.text() == "Connectors can be set up once the memory is open."
        # Without a keyring, secret fields are off and the page names the variables.
        page.kind.setCurrentIndex(page.kind.findData("trello"))
        assert not page.secret_field("token").isEnabled()
        assert "MAMA_CONNECTOR_NAME_TOKEN" in page.keyring_note.text()
        page.name.setText("work-trello")
        assert "MAMA_CONNECTOR_WORK_TRELLO_API_KEY" in page.keyring_note.text()
        # Save keeps the connectors it was given (the page could not read any).
        assert dialog.choice().settings.connectors == (kept,)

    loop.run_until_complete(scenario())


def test_boards_are_chosen_from_what_the_token_can_read(
    paths: Paths,
    store: Store,
    loop: asyncio.AbstractEventLoop,
    qtbot: Any,
    fake: FakeTrello,
    memory_keyring: MemoryKeyring,
) -> None:
    fake.add_board("Launch")
    archived = fake.add_board("Old plans")
    fake.boards[archived]["closed"] = True
    url = fake.serve()
    paths.home.mkdir(parents=True, exist_ok=True)

    async def choose(page: ConnectorsPage, tick: list[str]) -> list[str]:
        opened = asyncio.ensure_future(wait_signal(page.picker_opened, 30))
        done = asyncio.ensure_future(wait_signal(page.changed, 30))
        page.pick_button.click()
        (dialog,) = await opened
        offered = [dialog.list.item(r).text() for r in range(dialog.list.count())]
        for name in tick:
            dialog.set_checked(name)
        dialog.accept()
        await done
        return offered

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, Settings(), paths.home, settings_path=paths.settings, store=store
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None
        fill_trello(page, "work", url, "wrong-token")
        page.option_field("boards").clear()
        # Refused credentials: one line, and no list.
        done = asyncio.ensure_future(wait_signal(page.changed, 30))
        page.pick_button.click()
        await done
        assert page.status.text().startswith("work: invalid_auth: "), page.status.text()
        assert page.status.property("error") is True
        # The typed (not yet stored) credentials list the open boards; an archived one not.
        page.secret_field("token").setText(TOKEN)
        assert await choose(page, ["Launch"]) == ["Launch", "Roadmap"]
        assert page.option_field("boards").text() == "Launch"
        assert memory_keyring.secrets == {}  # listing stored nothing
        await act(page, page.add_button)
        saved = Settings.load(paths.settings).connector("work")
        assert saved is not None and saved.options["boards"] == ["Launch"]
        await page.aclose()

    loop.run_until_complete(scenario())


def test_without_a_keyring_the_page_says_to_set_the_variables_and_restart(
    paths: Paths, store: Store, loop: asyncio.AbstractEventLoop, qtbot: Any
) -> None:
    """No keyring (this test's): the secret fields are greyed out and offer nothing to
    type; the note and the refusal name the variables and say MAMA must be restarted
    to read them. Never "typed here" about a field that cannot be typed in."""
    paths.home.mkdir(parents=True, exist_ok=True)

    async def scenario() -> None:
        dialog = await settings_dialog(
            None, Settings(), paths.home, settings_path=paths.settings, store=store
        )
        qtbot.addWidget(dialog)
        page = dialog.connectors_page
        assert page is not None
        page.kind.setCurrentIndex(page.kind.findData("trello"))
        page.name.setText("work-trello")
        for key in ("api_key", "token"):
            field = page.secret_field(key)
            assert not field.isEnabled() and field.placeholderText() == ""
        note = page.keyring_note.text()
        assert "MAMA_CONNECTOR_WORK_TRELLO_API_KEY" in note
        assert "MAMA_CONNECTOR_WORK_TRELLO_TOKEN" in note and "restart MAMA" in note
        page.option_field("boards").setText("Roadmap")
        await act(page, page.add_button)
        assert page.status.property("error") is True
        assert page.status.text() == (
            "work-trello needs its API key and token: set MAMA_CONNECTOR_WORK_TRELLO_API_KEY "
            "and MAMA_CONNECTOR_WORK_TRELLO_TOKEN in MAMA's environment, then restart MAMA "
            "so it reads them."
        )
        assert Settings.load(paths.settings).connectors == ()
        await page.aclose()

    loop.run_until_complete(scenario())


def test_last_poll_names_its_time_zone() -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from ui.settings.connectors_page import _when

    polled = SimpleNamespace(last_poll_at=datetime(2026, 12, 1, 9, 30, tzinfo=UTC))
    shown = _when(polled)  # type: ignore[arg-type]
    zone = datetime(2026, 12, 1, 9, 30, tzinfo=UTC).astimezone().strftime("%Z")
    assert shown.endswith(f" {zone}") and zone
    assert _when(None) == "never"  # the control: no poll, no time
