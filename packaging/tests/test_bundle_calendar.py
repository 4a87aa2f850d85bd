"""The unpacked bundle's calendar connector against a real CalDAV server (Radicale from
PyPI, started here from the test's own Python on a free port): the CalDAV client and
its HTTP stack (caldav, niquests, lxml, icalendar, time zones) as the bundle carries
them, with what the spec leaves out (qh3, lxml's other parts) really absent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from bundle_support import Person

from tests.app.connectors.calendar_servers import PASSWORD, Radicale, running_radicale

pytestmark = pytest.mark.slow

NAME = "cal"
SECRET = "MAMA_CONNECTOR_CAL_PASSWORD"


@pytest.fixture(scope="module")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    with running_radicale(tmp_path_factory.mktemp("radicale")) as server:
        yield server


def review_tomorrow() -> str:
    """One meeting tomorrow at 10:00 in Berlin (inside the connector's window whatever
    day the test runs), written in the zone it was planned in."""
    day = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y%m%d")
    return "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//MAMA bundle tests//EN",
            "BEGIN:VEVENT",
            "UID:review",
            "DTSTAMP:20261120T080000Z",
            "SUMMARY:Quarterly review with Anna",
            f"DTSTART;TZID=Europe/Berlin:{day}T100000",
            f"DTEND;TZID=Europe/Berlin:{day}T110000",
            "LOCATION:Room 4",
            "ORGANIZER;CN=Anna K:mailto:anna@corp.example",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )


def test_calendar_connector_reads_a_caldav_server(person: Person, radicale: Radicale) -> None:
    account = radicale.account()
    calendar = account.make_calendar("work", "Work Stuff")
    account.put(calendar, "review", review_tomorrow())
    writes = radicale.writes(account.user)

    added = person.run(
        "connectors", "add", "calendar", NAME,
        "-o", f"url={account.url}", "-o", f"username={account.user}", "--json",
    )  # fmt: skip
    # No terminal: the password is not asked for but named as the variable to set.
    assert json.loads(added.stdout)["secrets_missing"] == [SECRET]

    # A wrong password: the CalDAV server's refusal as one clear line, nothing read.
    wrong = person.run("connectors", "poll", NAME, "--json", check=False, extra={SECRET: "nope"})
    assert wrong.returncode == 5, wrong.stderr
    assert wrong.stderr.strip().splitlines() == [
        "mama: connector_failed: cal: invalid_auth: "
        "The CalDAV server refused the user name or password."
    ]
    assert "Traceback" not in wrong.stderr and "nope" not in wrong.stderr
    assert wrong.stdout == ""

    # The control: the right password reads the event.
    polled = json.loads(
        person.run("connectors", "poll", NAME, "--json", extra={SECRET: PASSWORD}).stdout
    )
    assert (polled["read"], polled["stored"]) == (1, 1)
    observations = json.loads(person.run("observations", "list", "--json").stdout)
    [event] = observations["observations"]
    assert event["source"] == f"calendar:{account.user}"
    assert event["channel"] == "Work Stuff"
    assert event["metadata"]["tzid"] == "Europe/Berlin"
    assert "Quarterly review with Anna" in event["text"]
    assert "Room 4" in event["text"]
    assert "10:00-11:00" in event["text"]
    # Read only: the bundle wrote nothing to the server.
    assert radicale.writes(account.user) == writes
    # Radicale saw the bundle's reads (so the writes count above could have moved).
    assert radicale.requests(account.user, ("PROPFIND", "REPORT")) > 0
