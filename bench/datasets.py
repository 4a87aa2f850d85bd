"""Loading LoCoMo and LongMemEval files into stores to build and questions to ask.

Both follow their paper's retrieval protocol (see ../shared/bench/README.md):

- LoCoMo: one store per conversation, one memory per turn, text
  ``Speaker said, "text"`` plus `` and shared <caption>`` for an image, the
  session's date as event time; the questions that have evidence; evidence ids
  are dia_ids, entries split on ``,`` and ``;``.
- LongMemEval: one store per question (its haystack), one memory per *user*
  turn, its session's date as event time; sessions are ranked by their best
  turn. Evidence sessions are those with a user turn marked ``has_answer``
  (what the paper's turn-level evaluation counts); abstention questions
  (``_abs``) and questions without such a turn are skipped.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.harness import Memory

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


@dataclass(frozen=True)
class Question:
    """One scored query: its text, its category and the keys that answer it."""

    id: str
    text: str
    category: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """One store to build and the questions asked of it."""

    id: str
    memories: tuple[Memory, ...]
    questions: tuple[Question, ...]


def read_json(path: Path) -> Any:
    """A JSON file, gzip-compressed or not."""
    with path.open("rb") as fh:
        head = fh.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


# --- LoCoMo ----------------------------------------------------------------------

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def locomo_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a datetime (naive: the conversation's local time)."""
    cleaned = " ".join(text.replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    raise ValueError(f"unreadable LoCoMo date {text!r}")


def locomo_turn_text(turn: dict[str, Any]) -> str:
    """The memory text of one turn, as the LoCoMo protocol writes it."""
    text = f'{turn["speaker"]} said, "{turn.get("text", "")}"'
    caption = turn.get("blip_caption")
    if caption:
        text += f" and shared {caption}"
    return text


def split_evidence(evidence: list[str]) -> tuple[str, ...]:
    """Evidence dia_ids, entries split on ``,`` and ``;``, in order, without repeats."""
    parts: list[str] = []
    for entry in evidence:
        parts.extend(p.strip() for p in re.split(r"[,;]", entry) if p.strip())
    return tuple(dict.fromkeys(parts))


def locomo_cases(path: Path) -> Iterator[Case]:
    """One case per conversation."""
    for sample in read_json(path):
        conv = sample["conversation"]
        sessions = sorted(
            (int(m[1]), key) for key in conv if (m := _SESSION_KEY.match(key)) is not None
        )
        memories: list[Memory] = []
        for _, key in sessions:
            when = locomo_date(conv[f"{key}_date_time"])
            memories.extend(
                Memory(turn["dia_id"], locomo_turn_text(turn), when) for turn in conv[key]
            )
        questions: list[Question] = []
        for n, qa in enumerate(sample["qa"]):
            evidence = split_evidence(qa.get("evidence") or [])
            if not evidence:
                continue
            category = int(qa["category"])
            questions.append(
                Question(
                    id=f"{sample['sample_id']}#{n}",
                    text=str(qa["question"]),
                    category=f"{category} {LOCOMO_CATEGORIES.get(category, '?')}",
                    evidence=evidence,
                )
            )
        yield Case(str(sample["sample_id"]), tuple(memories), tuple(questions))


# --- LongMemEval -------------------------------------------------------------------


def longmemeval_date(text: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` as a datetime."""
    return datetime.strptime(re.sub(r"\s*\([^)]*\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M")


def longmemeval_cases(path: Path, skipped: list[str] | None = None) -> Iterator[Case]:
    """One case per scored question; ``skipped`` collects the ids left out and why."""
    for item in read_json(path):
        qid = str(item["question_id"])
        if qid.endswith("_abs"):
            if skipped is not None:
                skipped.append(f"{qid}: abstention")
            continue
        memories: list[Memory] = []
        evidence: list[str] = []
        for sid, date, session in zip(
            item["haystack_session_ids"],
            item["haystack_dates"],
            item["haystack_sessions"],
            strict=True,
        ):
            when = longmemeval_date(date)
            for i, turn in enumerate(session):
                if turn.get("role") != "user":
                    continue
                memories.append(Memory(f"{sid}\x1f{i}", str(turn.get("content", "")), when))
                if turn.get("has_answer"):
                    evidence.append(str(sid))
        if not evidence:
            if skipped is not None:
                skipped.append(f"{qid}: no user-side evidence turn")
            continue
        question = Question(
            id=qid,
            text=str(item["question"]),
            category=str(item["question_type"]),
            evidence=tuple(dict.fromkeys(evidence)),
        )
        yield Case(qid, tuple(memories), (question,))


def session_of(key: str) -> str:
    """The session id of a LongMemEval memory key."""
    return key.split("\x1f", 1)[0]
