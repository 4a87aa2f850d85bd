"""``mama connectors add calendar`` with a secret iCalendar address, polled, and ``mama ask
/today`` answering from it — the real console script in subprocesses, the ``.ics``
served on 127.0.0.1. The events are made for the real today in the owner's zone (the
console script reads the real clock)."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.app.connectors import calendar_data as data
from tests.app.connectors.calendar_servers import IcsFile
from tests.app.runtime.support import MAMA, mama_env

REPO_ROOT = Path(__file__).resolve().parents[3]
TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YORK = ZoneInfo("America/New_York")


def owner_zone() -> ZoneInfo:
    """Tokyo, or New York while it is near midnight in Tokyo (14 hours apart, so one of
    them is always at least 3 hours from a day's turn: the test's day cannot change)."""
    return TOKYO if 3 <= datetime.now(TOKYO).hour < 21 else NEW_YORK


def todays(now: datetime) -> str:
    """An all-day day, a 12:00 planning and yesterday's call, in ``now``'s zone."""
    today, zone = now.date(), str(now.tzinfo)
    return data.calendar(
        data.vevent(
            "day",
            "Hack day",
            f"DTSTART;VALUE=DATE:{today:%Y%m%d}",
            f"DTEND;VALUE=DATE:{today + timedelta(days=1):%Y%m%d}",
        ),
        data.vevent(
            "planning",
            "Planning",
            f"DTSTART;TZID={zone}:{today:%Y%m%d}T120000",
            f"DTEND;TZID={zone}:{today:%Y%m%d}T130000",
            "LOCATION:Room 2",
        ),
        data.vevent(
            "yesterday",
            "Yesterday's call",
            f"DTSTART;TZID={zone}:{today - timedelta(days=1):%Y%m%d}T120000",
            f"DTEND;TZID={zone}:{today - timedelta(days=1):%Y%m%d}T130000",
        ),
        name="Team",
    )


def test_add_poll_and_ask_today(tmp_path: Path, model_cache_dir: Path) -> None:
    zone = owner_zone()
    served = IcsFile(todays(datetime.now(zone)))
    try:
        env = mama_env(
            tmp_path / "home",
            model_cache_dir,
            MAMA_CONNECTOR_TEAM_ICS_URL=served.url,
            PYTHONPATH=str(REPO_ROOT),
        )

        def mama(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(MAMA), *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )

        def ok(*args: str) -> dict:
            done = mama(*args, "--json")
            assert done.returncode == 0, done.stderr
            return json.loads(done.stdout)

        assert ok("settings", "timezone", zone.key)["timezone"] == zone.key
        added = ok("connectors", "add", "calendar", "team")
        assert added["secrets_missing"] == []
        summary = ok("connectors", "test", "team")["summary"]
        assert summary.startswith("iCalendar address at 127.0.0.1 as anna@corp.example")
        assert "private-5ecret" not in summary
        polled = ok("connectors", "poll", "team")
        assert (polled["stored"], polled["more"]) == (3, False)

        today = mama("ask", "/today")
        assert today.returncode == 0, today.stderr
        lines = today.stdout.splitlines()
        assert lines[1:4] == [
            "Meetings today (2):",
            "• all day Hack day",
            "• 12:00-13:00 Planning (Room 2)",
        ]
        assert "Yesterday's call" not in today.stdout
        assert "private-5ecret" not in today.stdout
    finally:
        served.close()
