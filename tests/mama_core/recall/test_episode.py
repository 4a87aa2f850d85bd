"""The ``episode-v1`` stage: a top hit lends part of its vote to its episode neighbours.

Each test pits a neighbour against a twin with the very same text saved in
another episode (another event time): without the stage the twin wins the tie
(higher id), with it the neighbour moves ahead, and only the neighbour does.
"""

from __future__ import annotations

from mama_core.recall import FUSION_VERSION, PRESETS, RecallConfig
from tests.mama_core.recall.world import World

EPISODE = PRESETS["episode"]
MEETING = "2024-03-04T10:00:00Z"
LATER = "2024-05-20T09:00:00Z"
QUESTION = "Dana asked which courier handles the Lisbon shipments"
ANSWER = "Ravi answered that Transportes Aurora took it over in June"


def test_version_names_the_stage() -> None:
    assert "episode" not in FUSION_VERSION
    assert EPISODE.fusion_version == FUSION_VERSION + " episode-v1=0.5/seeds=10/width=1"


def test_neighbour_of_a_top_hit_moves_ahead_of_its_twin(world: World) -> None:
    asked = world.save(QUESTION, valid_from=MEETING)
    answered = world.save(ANSWER, valid_from=MEETING)
    # same words, another episode (the owner insists: else "already remembered")
    twin = world.save(ANSWER, valid_from=LATER, even_if_duplicate=True)
    world.save("The canteen serves soup on Fridays", valid_from=LATER)

    plain = world.ids("courier for the Lisbon shipments")
    assert plain[0] == asked
    assert plain.index(twin) < plain.index(answered)  # equal texts: the higher id ranks first

    ranked = world.ids("courier for the Lisbon shipments", config=EPISODE)
    assert ranked[0] == asked
    assert ranked.index(answered) < ranked.index(twin)
    # Only the neighbour's score changed: the twin keeps its own.
    before = {h.id: h.score for h in world.search("courier for the Lisbon shipments")}
    after = {
        h.id: h.score for h in world.search("courier for the Lisbon shipments", config=EPISODE)
    }
    assert after[twin] == before[twin]
    assert after[answered] > before[answered]
    # A hit the stage raised says so, naming the rank of the hit it neighbours.
    explained = {h.id: h for h in world.search("courier for the Lisbon shipments", config=EPISODE)}
    assert "episode" in explained[answered].found_by
    assert explained[answered].arms["episode"].rank == 1
    assert "episode" not in explained[twin].found_by


def test_the_stage_reaches_only_the_same_event_time(world: World) -> None:
    world.save(ANSWER, valid_from=LATER)  # would be a neighbour by id, not by episode
    asked = world.save(QUESTION, valid_from=MEETING)
    # The same words again on purpose: the owner insists (else "already remembered").
    later = world.save(ANSWER, valid_from=LATER, even_if_duplicate=True)
    assert world.cache.episode_neighbours([asked], 1) == []
    same = world.save(ANSWER, valid_from=MEETING, even_if_duplicate=True)
    # ``later`` sits between them, so ``same`` is two ids away: width 2 reaches it.
    assert world.cache.episode_neighbours([asked], 2) == []
    assert world.cache.episode_neighbours([later], 1) == []
    assert world.cache.episode_neighbours([same], 1) == []
    first = world.save(QUESTION, valid_from="2024-06-01T00:00:00Z", even_if_duplicate=True)
    second = world.save(ANSWER, valid_from="2024-06-01T00:00:00Z", even_if_duplicate=True)
    third = world.save(ANSWER, valid_from="2024-06-01T00:00:00Z", even_if_duplicate=True)
    assert world.cache.episode_neighbours([first], 1) == [(first, second)]
    assert world.cache.episode_neighbours([first], 2) == [(first, second), (first, third)]
    assert world.cache.episode_neighbours([second], 1) == [(second, first), (second, third)]


def test_a_neighbour_the_caller_may_not_read_stays_out(world: World) -> None:
    asked = world.save(QUESTION, valid_from=MEETING)
    hidden = world.save(ANSWER, scopes=["project:atlas"], valid_from=MEETING)
    twin = world.save(ANSWER, valid_from=LATER)

    ranked = world.ids("courier for the Lisbon shipments", config=EPISODE)
    assert asked in ranked and twin in ranked
    assert hidden not in ranked
    # Positive control: a caller who may read the project scope gets it, ahead of the twin.
    both = world.ids(
        "courier for the Lisbon shipments", ("global", "project:atlas"), config=EPISODE
    )
    assert both.index(hidden) < both.index(twin)


def test_stage_settings_are_checked() -> None:
    config = RecallConfig(episode_weight=1.0, episode_seeds=3, episode_width=2)
    assert "episode-v1=1/seeds=3/width=2" in config.fusion_version
    for bad in ({"episode_weight": -1.0}, {"episode_seeds": 0}, {"episode_width": 0}):
        try:
            RecallConfig(**bad)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")
