"""The benchmark's metrics and loaders, on small hand-made inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.datasets import (
    locomo_cases,
    locomo_date,
    longmemeval_cases,
    longmemeval_date,
    session_of,
    split_evidence,
)
from bench.harness import SUMMARY_MAX, split_text
from bench.metrics import dedupe, evidence_recall, ndcg_any, recall_all, recall_any, reciprocal_rank
from bench.plain_bm25 import PlainBM25


def test_locomo_metrics() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D2:1"]
    assert evidence_recall(ranked, ["D1:3", "D9:9"], 3) == 0.5
    assert evidence_recall(ranked, ["D1:3", "D9:9"], 2) == 0.0
    assert reciprocal_rank(ranked, ["D2:1", "D1:3"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranked, ["D9:9"]) == 0.0


def test_longmemeval_metrics() -> None:
    sessions = dedupe(["s1", "s1", "s3", "s2", "s3"])
    assert sessions == ["s1", "s3", "s2"]
    assert recall_all(sessions, ["s1", "s2"], 2) == 0.0
    assert recall_all(sessions, ["s1", "s2"], 3) == 1.0
    assert recall_any(sessions, ["s2"], 2) == 0.0
    assert ndcg_any(["a", "x"], ["a"], 10) == 1.0
    # LongMemEval's DCG leaves the first two positions undiscounted.
    assert ndcg_any(["x", "a"], ["a"], 10) == 1.0
    assert ndcg_any(["x", "y", "a"], ["a"], 10) == pytest.approx(1 / 1.584962500721156)


def test_evidence_split_and_dates() -> None:
    assert split_evidence(["D1:3; D2:4", "D1:3,D5:1"]) == ("D1:3", "D2:4", "D5:1")
    assert locomo_date("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"
    assert longmemeval_date("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00"


def test_long_text_is_split_within_limits() -> None:
    text = "word " * 3000
    summary, details = split_text(text)
    assert len(summary) <= SUMMARY_MAX and summary and details
    assert (summary + " " + details).split() == text.split()


def test_plain_bm25_ranks_the_matching_document_first() -> None:
    bm = PlainBM25(["the cat sat", "a dog barked loudly", "cats and dogs", "nothing here"])
    assert bm.rank("dog barked", 2)[0] == 1


def write_locomo(path: Path) -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I bake bread on Sundays."},
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {
                    "speaker": "Ann",
                    "dia_id": "D2:1",
                    "text": "Look at this.",
                    "blip_caption": "a photo of a sailing boat",
                },
                {"speaker": "Bob", "dia_id": "D2:2", "text": "I moved to Lisbon for work."},
            ],
        },
        "qa": [
            {"question": "What is the name of Ann's puppy?", "evidence": ["D1:1"], "category": 4},
            {"question": "Where did Bob move?", "evidence": ["D2:2"], "category": 1},
            {"question": "What did Ann share?", "evidence": ["D2:1"], "category": 5},
            {"question": "No evidence here", "evidence": [], "category": 2},
        ],
    }
    path.write_text(json.dumps([sample]), encoding="utf-8")


def test_locomo_loader(tmp_path: Path) -> None:
    write_locomo(tmp_path / "l.json")
    (case,) = list(locomo_cases(tmp_path / "l.json"))
    assert [m.key for m in case.memories] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert case.memories[2].text == 'Ann said, "Look at this." and shared a photo of a sailing boat'
    assert len(case.questions) == 3  # the one without evidence is not asked


def write_longmemeval(path: Path) -> None:
    def turn(role: str, content: str, answer: bool = False) -> dict[str, object]:
        out: dict[str, object] = {"role": role, "content": content}
        if answer:
            out["has_answer"] = True
        return out

    item = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "What colour is my bike?",
        "question_date": "2023/06/01 (Thu) 10:00",
        "answer": "red",
        "answer_session_ids": ["answer_1"],
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
        "haystack_session_ids": ["s_0", "answer_1"],
        "haystack_sessions": [
            [turn("user", "I like hiking in the hills."), turn("assistant", "Nice.")],
            [turn("user", "My new bike is red.", True), turn("assistant", "Cool bike!")],
        ],
    }
    abstention = {**item, "question_id": "q2_abs"}
    assistant_only = {
        **item,
        "question_id": "q3",
        "haystack_sessions": [
            [turn("user", "Hello"), turn("assistant", "The answer is here", True)],
            [turn("user", "Bye")],
        ],
    }
    path.write_text(json.dumps([item, abstention, assistant_only]), encoding="utf-8")


def test_longmemeval_loader(tmp_path: Path) -> None:
    write_longmemeval(tmp_path / "m.json")
    skipped: list[str] = []
    (case,) = list(longmemeval_cases(tmp_path / "m.json", skipped))
    assert [session_of(m.key) for m in case.memories] == ["s_0", "answer_1"]
    assert case.questions[0].evidence == ("answer_1",)
    assert len(skipped) == 2
