"""The ``when-v1`` stage: for a "when" question, a hit that says when moves ahead.

Two memories share the question's words; only one says when it happened. Without
the stage the other one ranks first (it repeats the words); with it the one
that carries the time does. The same stage leaves a question that does not ask
"when" alone, and never raises a memory the caller may not read.
"""

from __future__ import annotations

from mama_core.recall import FUSION_VERSION, PRESETS, RecallConfig
from mama_core.recall.temporal import asks_when, says_when
from tests.mama_core.recall.world import World

WHEN = PRESETS["when"]
TIMED = "Dana moved the Lisbon warehouse audit to last Tuesday"
UNTIMED = "The Lisbon warehouse audit: Dana runs the Lisbon warehouse audit with the auditors"
ASK = "When did Dana do the Lisbon warehouse audit?"


def test_version_names_the_stage() -> None:
    assert "when-v1" not in FUSION_VERSION
    assert WHEN.fusion_version == FUSION_VERSION + " when-v1=1/depth=30"


def test_cues() -> None:
    for text in (ASK, "what date was the launch", "How long ago did we sign?", "since when"):
        assert asks_when(text), text
    for text in ("Who runs the audit?", "What did Dana say about the whenua project?"):
        assert not asks_when(text), text
    for text in (
        TIMED,
        "signed on 3 March",
        "we met in 2023",
        "two weeks ago",
        "on 2024-05-01",
        "yesterday I called",
        "see you next weekend",
    ):
        assert says_when(text), text
    for text in (UNTIMED, "May I ask something", "march forward, team", "the 3 of us"):
        assert not says_when(text), text


def test_a_hit_that_says_when_moves_ahead_for_a_when_question(world: World) -> None:
    timed = world.save(TIMED)
    untimed = world.save(UNTIMED)
    world.save("The canteen serves soup on Fridays")

    plain = world.ids(ASK)
    assert plain.index(untimed) < plain.index(timed)  # more of the words: first without the stage

    ranked = world.ids(ASK, config=WHEN)
    assert ranked.index(timed) < ranked.index(untimed)
    hits = {h.id: h for h in world.search(ASK, config=WHEN)}
    assert "when" in hits[timed].found_by
    assert "when" not in hits[untimed].found_by


def test_a_question_that_does_not_ask_when_is_left_alone(world: World) -> None:
    world.save(TIMED)
    world.save(UNTIMED)
    text = "Who does the Lisbon warehouse audit?"
    assert world.ids(text, config=WHEN) == world.ids(text)
    assert [h.score for h in world.search(text, config=WHEN)] == [
        h.score for h in world.search(text)
    ]


def test_a_timed_memory_the_caller_may_not_read_stays_out(world: World) -> None:
    hidden = world.save(TIMED, scopes=["project:atlas"])
    untimed = world.save(UNTIMED)
    assert world.ids(ASK, config=WHEN) == [untimed]
    # Positive control: with the project scope the timed memory is read and raised.
    both = world.ids(ASK, ("global", "project:atlas"), config=WHEN)
    assert both.index(hidden) < both.index(untimed)


def test_stage_settings_are_checked() -> None:
    assert "when-v1=0.5/depth=10" in RecallConfig(when_weight=0.5, when_depth=10).fusion_version
    for bad in ({"when_weight": -1.0}, {"when_depth": 0}):
        try:
            RecallConfig(**bad)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")
