"""Recall settings are declarative: a frozen config, named presets, a versioned formula."""

from __future__ import annotations

import dataclasses

import pytest

from mama_core.recall import FUSION_VERSION, PRESETS, RecallConfig, preset
from tests.mama_core.recall.world import World


def test_presets_and_version() -> None:
    assert FUSION_VERSION == (
        "rrf-v1 k=10 depth=100 arms=bm25x1+trigramx1+vectorx1 vmin=model script-v1"
    )
    assert PRESETS["bm25_only"].fusion_version.endswith("arms=bm25x1+trigramx1")
    assert PRESETS["vector_only"].fusion_version.endswith("arms=vectorx1 vmin=model")
    assert RecallConfig(vector_min_score=0.3).fusion_version.endswith("vmin=0.3 script-v1")
    assert "recency=1/30d" in preset("recent").fusion_version
    with pytest.raises(KeyError, match="known"):
        preset("fastest")
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["default"].rrf_k = 1  # type: ignore[misc]
    with pytest.raises(ValueError):
        RecallConfig(arm_depth=0)


def test_recency_boost_prefers_the_newer_of_equals(world: World) -> None:
    # The same words twice on purpose: the owner insists (else "already remembered").
    recent = world.save("The team lunch is on Thursday", valid_from="2024-01-20T00:00:00Z")
    older = world.save(
        "The team lunch is on Thursday", valid_from="2023-12-01T00:00:00Z", even_if_duplicate=True
    )
    # Equal texts tie, and a tie goes to the higher id...
    assert world.ids("team lunch", valid_at="2024-02-01") == [older, recent]
    # ...unless the recency boost is on: then the more recent validity wins.
    boosted = world.ids("team lunch", config=PRESETS["recent"], valid_at="2024-02-01")
    assert boosted == [recent, older]


def test_topic_boost(world: World) -> None:
    plain = world.save("Backups run nightly at two", topic="")
    topical = world.save("Backups run nightly at two", topic="backups")
    config = RecallConfig(topic_weight=1.0)
    assert world.ids("backups nightly", config=config)[0] == topical
    assert plain in world.ids("backups nightly", config=config)
