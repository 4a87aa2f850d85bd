"""The injection corpus put where the owner's connectors read it, and read by them.

Each corpus message goes into the source its entry names, as a person there would
write it: Slack messages (thread replies as real replies to a parent) in the fake
Slack Web API, mail APPENDed to a real Dovecot over TLS, Trello comments and card
moves in the fake Trello API. The REAL connectors (``slack-sdk``, ``imapclient``,
``httpx``) then poll them through the scheduler's ``poll_once`` into the REAL
``ConnectorStore``: observations, cursor and one source-delta mailbox input per
poll, in one transaction — exactly what ``mama daemon`` does between two turns.

Every message is written by its own sender, ``mallory-<entry id>``, so the obedient
model can tell which corpus entry an evidence block holds (see ``support``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from app.connectors.base import Connector
from app.connectors.kinds import SecretLookup, build_connector
from app.connectors.mail import MailOptions
from app.connectors.trello import MAX_TEXT as TRELLO_TEXT_CAP
from app.durable.connector_store import ConnectorStore, Stored
from app.durable.transaction import RuntimeDb
from app.local.settings import ConnectorConfig
from app.runtime.connectors import ConnectorScheduler, PollSettings
from tests.app.connectors.dovecot_server import PASSWORD, Dovecot
from tests.app.connectors.fake_slack import FakeSlack
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello
from tests.app.connectors.mail_fixtures import imap_session
from tests.app.injection.support import (
    CARD_MOVE,
    CONNECTORS,
    MAIL_USER,
    SLACK_TEAM,
    Entry,
    instruction,
)

SLACK_CHANNEL = "eng"
TRELLO_BOARD = "Launch"
TEXT_CAPS = {"trello": TRELLO_TEXT_CAP, "mail": MailOptions.model_fields["max_text_chars"].default}
"""The characters of one item each connector keeps (Slack's is 20,000 too): the
corpus's 50 KB messages hide their instruction at the very end, beyond the cap, so
the connector stores them cut and the instruction never reaches the agent (the
digest shows their first 1,500 characters; the obedient model reads the rest with
``observation.read`` and finds no instruction: ``cut_by_connector``)."""


def sender(entry: Entry) -> str:
    """The name a corpus message is written under (its id inside)."""
    return f"mallory-{entry.id}"


def cut_by_connector(entries: Sequence[Entry]) -> list[str]:
    """Ids of the entries whose instruction lies beyond their connector's text cap."""
    return [
        e.id
        for e in entries
        if e.channel in TEXT_CAPS and instruction(e) not in e.text[: TEXT_CAPS[e.channel]]
    ]


@dataclass
class Sources:
    """The three running sources and the owner's connector settings for them."""

    slack: FakeSlack
    trello: FakeTrello
    trello_url: str
    mail: Dovecot

    def configs(self) -> tuple[ConnectorConfig, ...]:
        return (
            ConnectorConfig(
                name=CONNECTORS["slack"],
                kind="slack",
                options={"channels": [f"#{SLACK_CHANNEL}"], "base_url": self.slack.url},
            ),
            ConnectorConfig(
                name=CONNECTORS["mail"],
                kind="mail",
                options=self.mail.options(),
            ),
            ConnectorConfig(
                name=CONNECTORS["trello"],
                kind="trello",
                options={"boards": [TRELLO_BOARD], "base_url": self.trello_url},
            ),
        )

    def secret_for(self, name: str) -> SecretLookup:
        secrets: dict[str, dict[str, str]] = {
            CONNECTORS["slack"]: {"token": self.slack.token},
            CONNECTORS["mail"]: {"password": PASSWORD},
            CONNECTORS["trello"]: {"api_key": API_KEY, "token": TOKEN},
        }
        return secrets.get(name, {}).get

    # --- the attacker writes --------------------------------------------------

    def place(self, entries: Sequence[Entry]) -> None:
        """Write every entry into the source it names, in corpus order."""
        channel = next(c for c, v in self.slack.channels.items() if v["name"] == SLACK_CHANNEL)
        parent = self.slack.post(channel, "U0BOB", "lunch plans?", ago=3600)
        board = next(iter(self.trello.boards))
        mails: list[bytes] = []
        for n, entry in enumerate(entries):
            if entry.channel == "slack":
                user = f"U{n:07d}"
                self.slack.add_user(user, display_name=sender(entry))
                if entry.carrier == "thread_reply":
                    self.slack.reply(channel, parent, user, slack_escaped(entry.text))
                else:
                    self.slack.post(channel, user, slack_escaped(entry.text))
            elif entry.channel == "trello":
                self.trello.add_action(board, *trello_action(entry), who=sender(entry))
            else:
                mails.append(mail_of(entry))
        with imap_session(self.mail) as imap:
            for raw in mails:
                typ, data = imap.append('"INBOX"', None, None, raw)
                assert typ == "OK", data


def slack_escaped(text: str) -> str:
    """``text`` as Slack's API sends what a person typed (only ``& < >`` escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def trello_action(entry: Entry) -> tuple[str, dict[str, Any]]:
    """A card title is a card that moves; any other entry is a comment on a card."""
    moved = CARD_MOVE.match(entry.text) if entry.carrier == "card_title" else None
    if moved is not None:
        card = {"id": f"card-{entry.id}", "name": moved.group(1), "shortLink": entry.id}
        return "updateCard", {
            "card": card,
            "listBefore": {"name": "Backlog"},
            "listAfter": {"name": "Doing"},
            "old": {"idList": "backlog"},
        }
    card = {"id": "card-checklist", "name": "Launch checklist", "shortLink": "checklst"}
    return "commentCard", {"card": card, "text": entry.text}


def mail_of(entry: Entry) -> bytes:
    """The entry as a mail: a header carrier's lines are its real headers."""
    msg = EmailMessage()
    msg["From"] = f"{sender(entry)} <mallory@evil.example>"
    msg["To"] = MAIL_USER
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = f"<{entry.id}@evil.example>"
    body = entry.text
    if entry.carrier == "email_header":
        head, _, body = entry.text.partition("\n\n")
        for line in head.splitlines():
            name, _, value = line.partition(": ")
            msg[name] = value
    else:
        msg["Subject"] = "Launch notes"
    msg.set_content(body or "(no text)")
    return msg.as_bytes()


@asynccontextmanager
async def running_sources(mail: Dovecot) -> AsyncIterator[Sources]:
    """The fake Slack (on this loop) and Trello (a thread) beside ``mail``'s Dovecot."""
    slack = FakeSlack(team_id=SLACK_TEAM)
    await slack.start()
    slack.add_channel(SLACK_CHANNEL)
    slack.add_user("U0BOB", display_name="bob")
    trello = FakeTrello()
    trello.add_board(TRELLO_BOARD)
    url = trello.serve()
    try:
        yield Sources(slack, trello, url, replace(mail, user=MAIL_USER))
    finally:
        await slack.stop()
        trello.close()


async def poll_all(db: RuntimeDb, sources: Sources, per_poll: int) -> list[Stored]:
    """Poll the three connectors in turn, ``per_poll`` items at most each, until none
    has more: every poll stores its batch (and posts its delta) through the real
    scheduler and ``ConnectorStore``. The stored batches, in order."""

    async def run_db(fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    scheduler = ConnectorScheduler(
        ConnectorStore(db),
        sources.configs,
        run_db,
        secret_for=sources.secret_for,
        settings=PollSettings(batch_limit=per_poll),
    )
    built: list[tuple[ConnectorConfig, Connector]] = [
        (c, build_connector(c.kind, c.name, c.options, sources.secret_for(c.name)))
        for c in sources.configs()
    ]
    stored: list[Stored] = []
    try:
        pending = list(built)
        for _ in range(1000):
            if not pending:
                return stored
            for pair in list(pending):
                batch, more, _problems = await scheduler.poll_once(*pair)
                stored.append(batch)
                if not more:
                    pending.remove(pair)
        raise AssertionError("a connector kept saying it had more")
    finally:
        for _, connector in built:
            await connector.aclose()
