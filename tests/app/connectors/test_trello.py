"""The Trello connector, with its real httpx client, against the fake Trello API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from app.connectors import kinds
from app.connectors.base import ConnectorError, Problem
from app.connectors.trello import Trello, board_scope, build
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello


@pytest.fixture
def fake() -> Iterator[FakeTrello]:
    server = FakeTrello()
    yield server
    server.close()


def connector(url: str, *boards: str, token: str = TOKEN, page_size: int = 1000) -> Trello:
    return Trello("work", list(boards), API_KEY, token, base_url=url, page_size=page_size)


def poll(trello: Trello, cursor: str | None = None, limit: int = 200):
    async def run():
        try:
            return await trello.poll(cursor, limit)
        finally:
            await trello.aclose()

    return asyncio.run(run())


def test_actions_become_readable_items_with_their_board_scope(fake: FakeTrello) -> None:
    board = fake.add_board("Product Roadmap")
    card = {"id": "c1", "name": "Fix login", "shortLink": "abc"}
    fake.add_action(board, "createCard", {"card": card, "list": {"name": "To Do"}})
    fake.add_action(
        board,
        "updateCard",
        {"card": card, "listBefore": {"name": "Doing"}, "listAfter": {"name": "Done"}, "old": {}},
    )
    fake.add_action(
        board, "commentCard", {"card": card, "text": "Shipped on Monday"}, who="Ben Okafor"
    )
    fake.add_action(
        board,
        "updateCard",
        {"card": {**card, "due": "2026-12-24T17:00:00.000Z"}, "old": {"due": None}},
    )
    fake.add_action(
        board,
        "updateCard",
        {"card": {**card, "name": "Fix login (SSO)"}, "old": {"name": "Fix login"}},
    )
    url = fake.serve()

    batch = poll(connector(url, "product roadmap"))  # names match without case
    assert [i.text for i in batch.items] == [
        "Anna Berg created 'Fix login' in To Do",
        "Anna Berg moved 'Fix login' from Doing to Done",
        "Ben Okafor commented on 'Fix login': Shipped on Monday",
        "Anna Berg set the due date of 'Fix login' to 2026-12-24 17:00 UTC",
        "Anna Berg renamed 'Fix login' to 'Fix login (SSO)'",
    ]
    first = batch.items[0]
    assert first.scope == "project:trello/Product-Roadmap" == board_scope("Product Roadmap", board)
    assert first.channel == "Product Roadmap" and first.source == "trello:owner"
    assert first.external_id == fake.actions[board][0]["id"]
    assert first.metadata["url"] == "https://trello.com/c/abc"
    assert not batch.more


def test_paging_backwards_reads_the_whole_window_once(fake: FakeTrello) -> None:
    board = fake.add_board("Roadmap")
    ids = fake.add_card_moves(board, 23)
    url = fake.serve()

    batch = poll(connector(url, "Roadmap", page_size=5))
    assert [i.external_id for i in batch.items] == ids  # oldest first, none twice
    pages = [q for p, q in fake.requests if p.endswith("/actions")]
    assert len(pages) == 5 and "before" not in pages[0] and "before" in pages[-1]

    # The next poll from the cursor reads only what is new.
    cursor = batch.cursor
    new = fake.add_card_moves(board, 2)
    again = poll(connector(url, "Roadmap", page_size=5), cursor)
    assert [i.external_id for i in again.items] == new


def test_a_limit_returns_the_oldest_and_says_there_is_more(fake: FakeTrello) -> None:
    board = fake.add_board("Roadmap")
    ids = fake.add_card_moves(board, 12)
    url = fake.serve()
    got: list[str] = []
    cursor = None
    while True:
        batch = poll(connector(url, "Roadmap"), cursor, limit=5)
        got.extend(i.external_id for i in batch.items)
        cursor = batch.cursor
        if not batch.more:
            break
    assert got == ids
    assert json.loads(cursor or "{}") == {board: ids[-1]}


@pytest.mark.parametrize(
    ("setup", "problem", "retry_after"),
    [
        ("bad_token", Problem.AUTH, None),
        ("rate_limit", Problem.RATE_LIMITED, 7.0),
        ("server_error", Problem.UNAVAILABLE, None),
        ("no_board", Problem.NOT_FOUND, None),
    ],
)
def test_errors_become_connector_problems(
    fake: FakeTrello, setup: str, problem: Problem, retry_after: float | None
) -> None:
    fake.add_card_moves(fake.add_board("Roadmap"), 3)
    url = fake.serve()
    token, board = TOKEN, "Roadmap"
    if setup == "bad_token":
        token = "revoked"
    elif setup == "rate_limit":
        fake.rate_limit_next, fake.retry_after = 1, "7"
    elif setup == "server_error":
        fake.fail_next = [502]
    else:
        board = "Gone"
    with pytest.raises(ConnectorError) as caught:
        poll(connector(url, board, token=token))
    assert caught.value.problem is problem
    assert caught.value.retry_after == retry_after
    assert "\n" not in str(caught.value)
    # Positive control: the same connector, with the trouble gone, reads the board.
    assert len(poll(connector(url, "Roadmap")).items) == 3


def test_build_needs_boards_and_secrets() -> None:
    secrets = {"api_key": API_KEY, "token": TOKEN}
    with pytest.raises(ConnectorError) as no_boards:
        build("t", {}, secrets.get)
    assert no_boards.value.problem is Problem.CONFIG
    with pytest.raises(ConnectorError) as no_secret:
        build("t", {"boards": "Roadmap"}, {}.get)
    assert no_secret.value.problem is Problem.CONFIG
    built = build("t", {"boards": "Roadmap, Ops"}, secrets.get)
    assert built.boards == ["Roadmap", "Ops"]
    asyncio.run(built.aclose())


def test_a_kind_whose_module_is_missing_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kinds.KINDS, "carrier-pigeon", "app.connectors.carrier_pigeon")
    with pytest.raises(kinds.KindUnavailableError, match="not available in this build"):
        kinds.kind_module("carrier-pigeon")
    with pytest.raises(kinds.KindUnavailableError, match="no connector kind"):
        kinds.kind_module("fax")
    # Positive control: a kind that is here loads, with its help and secrets.
    assert kinds.secret_keys("trello") == ["api_key", "token"]
    assert kinds.KNOWN_SECRETS["mail"]({"auth": "xoauth2"}) == ["oauth_token"]
    assert kinds.KNOWN_SECRETS["mail"]({}) == ["password"]
    assert "boards" in kinds.options_help("trello")


def test_what_a_poll_read_but_did_not_return_is_not_read_again(fake: FakeTrello) -> None:
    board = fake.add_board("Roadmap")
    ids = fake.add_card_moves(board, 12)
    url = fake.serve()
    trello = connector(url, "Roadmap", page_size=5)

    async def run() -> list[str]:
        got: list[str] = []
        try:
            first = await trello.poll(None, 5)
            got.extend(i.external_id for i in first.items)
            late = fake.add_card_moves(board, 1)  # arrives between polls
            ids.extend(late)
            cursor, more = first.cursor, first.more
            while more:
                batch = await trello.poll(cursor, 5)
                got.extend(i.external_id for i in batch.items)
                cursor, more = batch.cursor, batch.more
        finally:
            await trello.aclose()
        return got

    assert asyncio.run(run()) == ids  # every action once, in order, the late one too
    pages = [q for p, q in fake.requests if p.endswith("/actions")]
    # The first poll read the window (3 pages); each later one only what was newer.
    assert len(pages) == 3 + 2
