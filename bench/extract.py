"""Precision and recall of the no-model commitment finder on its labelled corpus.

    python -m bench.extract [--corpus DIR] [--misses] [--sample JSONL] [--json OUT]

The corpus (``tests/mama_core/extraction_corpus/*.jsonl``) holds owner-style Slack,
mail and Trello messages in English, German, French and Spanish, about half of them
negatives (questions, conditionals, past tense, quoted text, jokes, hypotheticals,
requests), each with the commitments a careful reader finds in it. Every third
message of a language is held out: the rules were tuned on ``dev`` only.

Scoring, per message:

- a found commitment is right when a labelled one has the same debtor (``owed_by``,
  case-folded) and is not taken yet; precision = right / found, recall = right / labelled;
- ``to whom`` is the share of right commitments whose ``owed_to`` matches too;
- dates: among right commitments, a found due is right when it equals the labelled
  one (a date alone means 17:00 in the message's zone); date precision = right dues /
  dues found, date recall = right dues / dues labelled.

Prints a table (overall, per language, per split) and ends with the line
``commitments precision=… recall=…; dates precision=… recall=…``.

``--sample`` reads unlabelled items (JSONL with ``text`` and optionally ``author``,
``channel``, ``at``) and prints how many commitments would be proposed per 100 items:
the review load, e.g. on the 236 hostile items of ``tests/app/injection/corpus.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from mama_core.extraction import FoundCommitment, Message, find_commitments
from mama_core.extraction.dates import DAY_END

UTC_ZONE = ZoneInfo("UTC")
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "mama_core" / "extraction_corpus"


@dataclass(frozen=True)
class Expected:
    owed_by: str
    owed_to: str
    due: str | None
    """``YYYY-MM-DD`` (due at 17:00) or ``YYYY-MM-DDTHH:MM``, local to the message's zone."""


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    split: str
    source: str
    channel: str
    author: str
    at: datetime
    zone: ZoneInfo
    text: str
    expect: tuple[Expected, ...]

    @property
    def audience(self) -> str:
        """Whom an unaddressed promise is made to: the owner for mail, else the channel."""
        return "owner" if self.source == "mail" else self.channel

    def message(self) -> Message:
        return Message(self.text, self.author, self.at, self.audience, None)


def load_corpus(folder: Path = CORPUS) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row: dict[str, Any] = json.loads(line)
            cases.append(
                Case(
                    id=row["id"],
                    lang=row["lang"],
                    split=row["split"],
                    source=row["source"],
                    channel=row["channel"],
                    author=row["author"],
                    at=datetime.fromisoformat(row["at"]),
                    zone=ZoneInfo(row["tz"]),
                    text=row["text"],
                    expect=tuple(Expected(**e) for e in row["expect"]),
                )
            )
    return cases


def expected_due(case: Case, due: str | None) -> datetime | None:
    if due is None:
        return None
    moment = datetime.fromisoformat(due if "T" in due else f"{due}T{DAY_END.isoformat()}")
    return moment.replace(tzinfo=case.zone)


@dataclass
class Tally:
    found: int = 0
    labelled: int = 0
    right: int = 0
    right_to: int = 0
    dues_found: int = 0
    dues_labelled: int = 0
    dues_right: int = 0
    messages: int = 0
    negatives: int = 0
    misses: list[str] = field(default_factory=list[str])

    def add(self, other: Tally) -> None:
        for name in (
            "found",
            "labelled",
            "right",
            "right_to",
            "dues_found",
            "dues_labelled",
            "dues_right",
            "messages",
            "negatives",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses.extend(other.misses)

    @property
    def precision(self) -> float:
        return self.right / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.labelled if self.labelled else 1.0

    @property
    def date_precision(self) -> float:
        return self.dues_right / self.dues_found if self.dues_found else 1.0

    @property
    def date_recall(self) -> float:
        return self.dues_right / self.dues_labelled if self.dues_labelled else 1.0

    @property
    def to_whom(self) -> float:
        return self.right_to / self.right if self.right else 1.0


def score_case(case: Case, found: Sequence[FoundCommitment]) -> Tally:
    """The tally of one message: ``found`` against its labels."""
    tally = Tally(messages=1, negatives=int(not case.expect))
    tally.found, tally.labelled = len(found), len(case.expect)
    tally.dues_labelled = sum(1 for e in case.expect if e.due is not None)
    open_labels = list(case.expect)
    for hit in found:
        match = next(
            (e for e in open_labels if e.owed_by.casefold() == hit.owed_by.casefold()), None
        )
        if match is None:
            tally.misses.append(f"{case.id} WRONG {hit.owed_by!r} {hit.rule}: {hit.what!r}")
            if hit.due is not None:
                tally.dues_found += 1
            continue
        open_labels.remove(match)
        tally.right += 1
        tally.right_to += int(hit.owed_to.casefold() == match.owed_to.casefold())
        want = expected_due(case, match.due)
        if hit.due is not None:
            tally.dues_found += 1
        if hit.due is not None and want is not None and hit.due == want:
            tally.dues_right += 1
        elif hit.due != want:
            tally.misses.append(f"{case.id} DUE {hit.due} != {want}: {case.text[:70]!r}")
    tally.misses.extend(f"{case.id} MISSED {e.owed_by!r}: {case.text[:70]!r}" for e in open_labels)
    return tally


def evaluate(cases: Iterable[Case]) -> dict[str, Tally]:
    """Tallies by ``all``, ``lang:xx`` and ``split:yy``."""
    tallies: dict[str, Tally] = {}
    for case in cases:
        one = score_case(case, find_commitments(case.message(), case.zone))
        for key in ("all", f"lang:{case.lang}", f"split:{case.split}"):
            tallies.setdefault(key, Tally()).add(one)
    return tallies


def _row(name: str, t: Tally) -> str:
    return (
        f"{name:<11} {t.messages:>4} {t.negatives:>4} {t.labelled:>5} {t.found:>5} "
        f"{t.precision:>6.3f} {t.recall:>6.3f} {t.to_whom:>6.3f} "
        f"{t.date_precision:>6.3f} {t.date_recall:>6.3f}"
    )


def report(tallies: dict[str, Tally], misses: bool = False) -> str:
    lines = [
        "Commitments found without a model (mama_core.extraction), labelled corpus:",
        f"{'':<11} {'msgs':>4} {'neg':>4} {'label':>5} {'found':>5} {'P':>6} {'R':>6} "
        f"{'to':>6} {'dateP':>6} {'dateR':>6}",
    ]
    order = ["all", *sorted(k for k in tallies if k.startswith("lang:"))]
    order += sorted(k for k in tallies if k.startswith("split:"))
    lines += [_row(key, tallies[key]) for key in order]
    if misses:
        lines.append("")
        lines += tallies["all"].misses
    total = tallies["all"]
    lines.append(
        f"commitments precision={total.precision:.3f} recall={total.recall:.3f}; "
        f"dates precision={total.date_precision:.3f} recall={total.date_recall:.3f}"
    )
    return "\n".join(lines)


def per_hundred(path: Path, zone: ZoneInfo = UTC_ZONE) -> tuple[int, int]:
    """(items, commitments found) over the unlabelled items of ``path``."""
    items = found = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row: dict[str, Any] = json.loads(line)
        at = datetime.fromisoformat(row.get("at") or "2026-12-02T10:00:00+00:00")
        message = Message(str(row["text"]), str(row.get("author") or "someone"), at)
        items += 1
        found += len(find_commitments(message, zone))
    return items, found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.extract", description=__doc__)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--misses", action="store_true", help="list every wrong or missed case")
    parser.add_argument("--sample", type=Path, help="unlabelled items: proposals per 100")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    tallies = evaluate(load_corpus(args.corpus))
    print(report(tallies, args.misses))
    if args.sample is not None:
        items, found = per_hundred(args.sample)
        print(
            f"sample {args.sample.name}: {items} items, {found} commitments, "
            f"{100 * found / max(items, 1):.1f} proposals per 100 items"
        )
    if args.json is not None:
        figures = {
            key: {
                "messages": t.messages,
                "precision": t.precision,
                "recall": t.recall,
                "to_whom": t.to_whom,
                "date_precision": t.date_precision,
                "date_recall": t.date_recall,
            }
            for key, t in tallies.items()
        }
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
