"""Cross-script abstention (script-v1): a word arm abstains on what it cannot read."""

from __future__ import annotations

from mama_core.recall.fusion import Ranked, rrf
from mama_core.recall.scripts import dominant_script, with_abstention


def test_dominant_script_by_letters() -> None:
    assert dominant_script("Send the Q3 report by Friday") == "LATIN"
    assert dominant_script("주간 보고서는 월요일 아침에 보내기 (Q3 report)") == "HANGUL"
    assert dominant_script("金曜日にデプロイする") == "CJK"
    assert dominant_script("Отчёт до пятницы") == "CYRILLIC"
    assert dominant_script("2026-12-01 10:30") is None


def test_a_note_in_another_script_is_not_outvoted_by_the_word_arms() -> None:
    english, korean = 1, 2
    arms = {
        "bm25": [Ranked(english, 5.0, 1)],
        "trigram": [Ranked(english, 4.0, 1)],
        "vector": [Ranked(korean, 0.9, 1), Ranked(english, 0.88, 2)],
    }
    weights = {"bm25": 1.0, "trigram": 1.0, "vector": 1.0}
    # Without abstention the word arms' silence counts against the Korean note.
    assert rrf(arms, weights, 10)[0].id == english
    scripts = {english: "LATIN", korean: "HANGUL"}
    fused = rrf(with_abstention(arms, "LATIN", scripts), weights, 10)
    assert fused[0].id == korean


def test_the_query_s_own_script_is_untouched() -> None:
    """An English query over English notes ranks exactly as before (control)."""
    arms = {
        "bm25": [Ranked(1, 5.0, 1)],
        "trigram": [Ranked(1, 4.0, 1)],
        "vector": [Ranked(2, 0.9, 1), Ranked(1, 0.88, 2)],
    }
    same = with_abstention(arms, "LATIN", {1: "LATIN", 2: "LATIN"})
    assert same == {arm: list(ranked) for arm, ranked in arms.items()}
    # A word arm that found the foreign note itself keeps its own rank for it.
    found = with_abstention({**arms, "bm25": [Ranked(2, 1.0, 7)]}, "LATIN", {2: "HANGUL"})
    assert found["bm25"] == [Ranked(2, 1.0, 7)]
    assert found["trigram"] == [Ranked(1, 4.0, 1), Ranked(2, 0.0, 1)]
