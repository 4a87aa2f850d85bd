"""List options as an owner types them on the command line (``--option channels=#a,#b``)
reach the Slack and mail connectors as lists, like a JSON list does."""

from __future__ import annotations

import pytest

from app.connectors import mail, slack
from app.connectors.base import ConnectorError, Problem


def test_slack_channels_typed_with_commas_are_a_list() -> None:
    typed = slack.build("work", {"channels": "#general, #eng"}, lambda key: "xoxb-1")
    as_json = slack.build("work", {"channels": ["#general", "#eng"]}, lambda key: "xoxb-1")
    assert typed.options.channels == as_json.options.channels == ("#general", "#eng")


def test_mail_folders_typed_with_commas_are_a_list() -> None:
    options = {"host": "imap.example.com", "username": "me@example.com"}
    typed = mail.build("mail", {**options, "folders": "INBOX, Projects"}, lambda key: "pw")
    assert typed.options.folders == ("INBOX", "Projects")
    # Control: the default is INBOX alone.
    assert mail.build("mail", options, lambda key: "pw").options.folders == ("INBOX",)


def test_an_empty_channel_list_is_a_settings_error() -> None:
    with pytest.raises(ConnectorError) as error:
        slack.build("work", {"channels": " , "}, lambda key: "xoxb-1")
    assert error.value.problem is Problem.CONFIG
