"""``mama settings`` and ``mama brief now`` as a person runs them: the real console script
in a subprocess against a real encrypted store."""

from __future__ import annotations

from tests.app.test_cli_memory import Mama, mama  # noqa: F401  (the fixture)


def test_the_owner_sets_timezone_and_brief_and_bad_values_are_one_line(mama: Mama) -> None:  # noqa: F811
    assert mama.json("settings", "show")["timezone"] is None
    assert mama.json("settings", "timezone", "Europe/Berlin")["timezone"] == "Europe/Berlin"
    brief = mama.json("settings", "brief", "--on", "--days", "weekdays", "--time", "07:45")
    assert brief["brief"] == {
        "enabled": True,
        "days": ["mon", "tue", "wed", "thu", "fri"],
        "time": "07:45",
        "covers": ["observations", "commitments", "proposals"],
    }
    shown = mama.run("settings", "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "Timezone: Europe/Berlin",
        "Daily brief: on, mon,tue,wed,thu,fri at 07:45; covers observations, commitments, "
        "proposals",
    ]

    bad = mama.run("settings", "timezone", "Mars/Olympus")
    assert bad.returncode != 0 and bad.stdout == ""
    assert bad.stderr.startswith("mama: invalid_input: ") and len(bad.stderr.splitlines()) == 1
    bad_time = mama.run("settings", "brief", "--time", "7.45")
    assert bad_time.returncode != 0 and "time" in bad_time.stderr
    # Nothing changed by the refusals.
    assert mama.json("settings", "show")["brief"]["time"] == "07:45"


def test_brief_now_prints_the_command_mode_brief(mama: Mama) -> None:  # noqa: F811
    mama.json("settings", "timezone", "UTC")
    saved = mama.json("remember", "The budget is 10k", "--kind", "fact")
    assert saved["status"] == "active"
    result = mama.json("brief", "now")
    lines = result["lines"]
    assert lines[0].startswith("Your brief for ") and lines[0].endswith("(UTC)")
    assert lines[2:4] == ["From your connectors so far:", "• nothing new"]
    assert lines[5:] == [
        "Commitments: nothing overdue, nothing due today, nothing new to confirm.",
        "",
        "Proposals: none waiting for your review.",
    ]
    assert result["queued"] is None
    plain = mama.run("brief", "now")
    assert plain.returncode == 0 and plain.stdout.splitlines()[2] == "From your connectors so far:"
    sent = mama.json("brief", "now", "--send")
    assert isinstance(sent["queued"], int)
