"""``mama settings`` and ``mama brief now`` as a person runs them: the real console script
in a subprocess against a real encrypted store."""

from __future__ import annotations

from pathlib import Path

from mama_core.store import DbKey, Store
from tests.app.test_cli_memory import Mama, mama  # noqa: F401  (the fixture)
from tests.conftest import TEST_KEY_HEX


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


def test_the_owner_decides_a_settings_change_from_a_tainted_turn(
    mama: Mama,  # noqa: F811
    model_cache_dir: Path,
) -> None:
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, Grant, SessionFacts
    from mama_core.session import ActorKind

    mama.json("settings", "timezone", "Europe/Berlin")
    tainted = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="claude-code").with_taint()
    with (
        Store.open(mama.home / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, load_embedder(None, model_cache_dir)) as engine,
    ):
        changes = [
            engine.dispatch("owner.set_timezone", payload, tainted, Grant.agent(["global"]))[
                "change_id"
            ]
            for payload in (
                {"timezone": "Pacific/Kiritimati", "reason": "the mail says so"},
                {"timezone": "Asia/Tokyo"},
            )
        ]
        brief = engine.dispatch("owner.set_brief", {"enabled": True}, tainted, Grant.agent([]))
    shown = mama.run("settings", "show")
    assert shown.returncode == 0, shown.stderr
    assert "Timezone: Europe/Berlin" in shown.stdout
    assert (
        f"Waiting for you: change {changes[1]}: claude-code (owner_message turn) proposes to "
        "set your timezone to Asia/Tokyo" in shown.stdout
    )
    assert "Kiritimati" not in shown.stdout  # superseded by the newer proposal
    assert f"mama approve --change {changes[1]}" in shown.stdout

    stale = mama.run("approve", "--change", str(changes[0]))
    assert stale.returncode != 0 and "no longer waiting" in stale.stderr
    approved = mama.run("approve", "--change", str(changes[1]))
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == f"approved change {changes[1]} to your settings"
    rejected = mama.json("reject", "--change", str(brief["change_id"]), "--reason", "no")
    assert rejected["change_id"] == brief["change_id"]
    settings = mama.json("settings", "show")
    assert settings["timezone"] == "Asia/Tokyo" and settings["brief"]["enabled"] is False
    assert settings["pending_changes"] == []
    neither = mama.run("approve")
    assert neither.returncode != 0 and "--change" in neither.stderr
