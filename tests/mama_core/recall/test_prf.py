"""The ``prf-v1`` stage: words of the top hits search again, so a memory that shares
no word with the question but shares one with its best answer moves up.

The question asks about the courier; the top hit names it (Aurora); a third
memory mentions only Aurora. Without the stage the BM25 arms cannot find that
memory; with it, the word "aurora" taken from the top hit finds it. Words are
taken only from hits the caller may read.
"""

from __future__ import annotations

from mama_core.recall import FUSION_VERSION, PRESETS, RecallConfig
from tests.mama_core.recall.world import World

PRF = PRESETS["prf"]
ASK = "which courier handles the Lisbon shipments"
TOP = "The courier for the Lisbon shipments is Transportes Aurora"
LINKED = "Aurora invoices are paid on the first Monday of each month"
OTHER = "The canteen serves soup on Fridays"


def test_version_names_the_stage() -> None:
    assert "prf-v1" not in FUSION_VERSION
    assert PRF.fusion_version == FUSION_VERSION + " prf-v1=0.5/docs=3/terms=5"
    names = RecallConfig(prf_weight=1.0, prf_docs=2, prf_terms=4, prf_names_only=True)
    assert "prf-v1=1/docs=2/terms=4/names" in names.fusion_version


def test_a_word_of_the_top_hit_finds_a_memory_the_question_does_not(world: World) -> None:
    top = world.save(TOP)
    linked = world.save(LINKED)
    other = world.save(OTHER)

    plain = {h.id: h for h in world.search(ASK)}
    assert "bm25" not in plain[linked].found_by if linked in plain else True

    hits = world.search(ASK, config=PRF)
    found = {h.id: h for h in hits}
    assert hits[0].id == top
    assert "prf" in found[linked].found_by
    assert other not in found or "prf" not in found[other].found_by
    assert found[linked].score > (plain[linked].score if linked in plain else 0.0)


def test_words_come_only_from_hits_the_caller_may_read(world: World) -> None:
    one_hit = PRF.with_changes(prf_docs=1)
    hidden = world.save(TOP, scopes=["project:atlas"])
    visible_top = world.save("The Lisbon shipments leave on Tuesdays")
    linked = world.save("Transportes invoices are paid monthly")

    hits = world.search(ASK, config=one_hit)
    assert hits[0].id == visible_top
    assert hidden not in {h.id for h in hits}
    # The readable top hit has no word another memory shares: nothing to expand.
    assert all("prf" not in h.found_by for h in hits)
    # Positive control: a caller who may read the project scope gets its top hit's
    # words ("transportes"), and through them the linked memory.
    both = world.search(ASK, ("global", "project:atlas"), config=one_hit)
    assert both[0].id == hidden
    assert "prf" in {h.id: h for h in both}[linked].found_by


def test_stage_settings_are_checked() -> None:
    for bad in ({"prf_weight": -1.0}, {"prf_docs": 0}, {"prf_terms": 0}):
        try:
            RecallConfig(**bad)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")
