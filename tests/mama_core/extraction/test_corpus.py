"""The rule set's precision on its labelled corpus stays at or above 0.9 (a wrong
commitment costs the owner more than a missed one). Not a timing test: the figures
``python -m bench.extract`` prints, held to their floor."""

from __future__ import annotations

from bench.extract import Case, evaluate, load_corpus, score_case
from mama_core.extraction import find_commitments

PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.75
"""Recall is held too: a finder that finds nothing would have perfect precision."""


def test_the_corpus_is_what_the_figures_claim() -> None:
    cases = load_corpus()
    assert len(cases) >= 150
    assert {c.lang for c in cases} >= {"en", "de", "fr", "es"}
    for lang in ("en", "de", "fr", "es"):
        mine = [c for c in cases if c.lang == lang]
        assert any(c.expect for c in mine) and any(not c.expect for c in mine)
        assert {c.split for c in mine} == {"dev", "held", "late"}
    assert len({c.id for c in cases}) == len(cases)


def test_precision_is_at_least_the_floor_overall_per_language_and_split() -> None:
    tallies = evaluate(load_corpus())
    for key, tally in tallies.items():
        assert tally.precision >= PRECISION_FLOOR, (key, tally.misses)
        assert tally.recall >= RECALL_FLOOR, (key, tally.misses)
    assert tallies["all"].date_precision >= PRECISION_FLOOR


def test_the_scoring_counts_a_wrong_commitment_against_precision() -> None:
    # Positive control for the scorer: a negative message scored against a found
    # commitment (taken from a positive one) lowers precision; its own finding does not.
    cases = load_corpus()
    negative = next(c for c in cases if not c.expect)
    positive = next(c for c in cases if c.expect and c.lang == "en")
    foreign = find_commitments(positive.message(), positive.zone)
    assert foreign
    assert score_case(negative, foreign).precision == 0.0
    assert score_case(negative, find_commitments(negative.message(), negative.zone)).found == 0
    assert _found_right(positive) == len(positive.expect)


def _found_right(case: Case) -> int:
    return score_case(case, find_commitments(case.message(), case.zone)).right
