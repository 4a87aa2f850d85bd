"""The multilingual notes file: owner notes in many scripts, each with two questions.

``bench/data/multilingual_notes.json`` holds ``languages`` (code -> name and
script) and ``notes``: each with ``id``, ``language``, ``script``, ``topic`` (a
group id shared by notes on the same subject in other languages, which are each
other's distractors), ``note`` and two questions whose answer is that note,
``question_en`` and ``question_native`` (for English notes a second English
phrasing). ``problems`` says what is wrong with a file, one line per problem.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path(__file__).parent / "data" / "multilingual_notes.json"

# The scripts the benchmark must cover (issue 24), and the Unicode names that
# mark each one's letters. Japanese needs kana; Latin needs a letter with a mark.
REQUIRED_SCRIPTS = (
    "Latin",
    "Cyrillic",
    "Greek",
    "Arabic",
    "Hebrew",
    "Devanagari",
    "Han",
    "Japanese",
    "Hangul",
)
_SCRIPT_MARKS: dict[str, tuple[str, ...]] = {
    "Latin": ("LATIN",),
    "Cyrillic": ("CYRILLIC",),
    "Greek": ("GREEK",),
    "Arabic": ("ARABIC",),
    "Hebrew": ("HEBREW",),
    "Devanagari": ("DEVANAGARI",),
    "Han": ("CJK UNIFIED IDEOGRAPH",),
    "Japanese": ("HIRAGANA", "KATAKANA"),
    "Hangul": ("HANGUL",),
}
FIELDS = ("id", "language", "script", "topic", "note", "question_en", "question_native")


@dataclass(frozen=True)
class Note:
    """One owner note and the two questions it answers."""

    id: str
    language: str
    script: str
    topic: str
    note: str
    question_en: str
    question_native: str


@dataclass(frozen=True)
class NoteSet:
    """The file's languages (code -> name, script) and its notes, in file order."""

    languages: dict[str, tuple[str, str]]
    notes: tuple[Note, ...]

    def subset(self, languages: Iterable[str] | None, per_language: int | None) -> NoteSet:
        """The notes of ``languages`` (all when None), the first ``per_language`` of each."""
        wanted = None if languages is None else set(languages)
        taken: Counter[str] = Counter()
        kept: list[Note] = []
        for note in self.notes:
            if wanted is not None and note.language not in wanted:
                continue
            if per_language is not None and taken[note.language] >= per_language:
                continue
            taken[note.language] += 1
            kept.append(note)
        langs = {c: v for c, v in self.languages.items() if c in taken}
        return NoteSet(langs, tuple(kept))


def load_notes(path: Path = DEFAULT_PATH) -> NoteSet:
    """The notes file at ``path``; ``ValueError`` with one line when it is not one."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read notes file {path}: {exc}") from exc
    if not isinstance(raw, dict) or "notes" not in raw or "languages" not in raw:
        raise ValueError(f"{path} is not a notes file: it needs 'languages' and 'notes'")
    languages = {
        str(code): (str(v.get("name", code)), str(v.get("script", "")))
        for code, v in dict(raw["languages"]).items()
    }
    notes: list[Note] = []
    for n, item in enumerate(raw["notes"]):
        missing = [f for f in FIELDS if f not in item]
        if missing:
            raise ValueError(f"{path}: note #{n} lacks {', '.join(missing)}")
        notes.append(Note(**{f: str(item[f]) for f in FIELDS}))
    return NoteSet(languages, tuple(notes))


def scripts_in(text: str) -> set[str]:
    """The required scripts whose letters occur in ``text`` (Latin: with a diacritic too)."""
    found: set[str] = set()
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        for script, marks in _SCRIPT_MARKS.items():
            if any(name.startswith(m) for m in marks):
                found.add(script)
    return found


def _has_diacritic(text: str) -> bool:
    return any(
        unicodedata.combining(c) for ch in text for c in unicodedata.normalize("NFD", ch)[1:]
    )


def shared_topics(notes: Sequence[Note], min_languages: int = 3) -> dict[str, set[str]]:
    """Topics whose notes span at least ``min_languages`` languages, with those languages."""
    spread: dict[str, set[str]] = defaultdict(set)
    for note in notes:
        spread[note.topic].add(note.language)
    return {t: langs for t, langs in spread.items() if len(langs) >= min_languages}


def problems(notes: NoteSet, min_per_language: int = 1) -> list[str]:
    """Everything wrong with a notes set, one line each; empty when it is usable."""
    out: list[str] = []
    seen: dict[str, dict[str, str]] = {f: {} for f in ("id", "note", "question_en")}
    native_seen: dict[str, str] = {}
    for note in notes.notes:
        for field in FIELDS:
            if not str(getattr(note, field)).strip():
                out.append(f"{note.id or '?'}: empty {field}")
        if note.language not in notes.languages:
            out.append(f"{note.id}: language {note.language!r} is not in 'languages'")
        elif notes.languages[note.language][1] != note.script:
            out.append(f"{note.id}: script {note.script!r} differs from its language's")
        for field, index in seen.items():
            value = getattr(note, field)
            if value in index:
                out.append(f"{note.id}: same {field} as {index[value]}")
            index.setdefault(value, note.id)
        # An English note's native question is a second English phrasing of its own.
        if note.question_native in native_seen:
            out.append(f"{note.id}: same question_native as {native_seen[note.question_native]}")
        native_seen.setdefault(note.question_native, note.id)
        if note.language == "en" and note.question_native == note.question_en:
            out.append(f"{note.id}: its two English questions are the same")
        if note.script in _SCRIPT_MARKS:
            for field in ("note", "question_native"):
                text = getattr(note, field)
                if note.script not in scripts_in(text):
                    out.append(f"{note.id}: {field} has no {note.script} letters")
        elif note.script:
            out.append(f"{note.id}: unknown script {note.script!r}")
    counts = Counter(n.language for n in notes.notes)
    for code in notes.languages:
        if counts[code] < min_per_language:
            out.append(f"language {code}: {counts[code]} notes, fewer than {min_per_language}")
    diacritics = any(
        n.script == "Latin" and n.language != "en" and _has_diacritic(n.note) for n in notes.notes
    )
    if any(n.script == "Latin" and n.language != "en" for n in notes.notes) and not diacritics:
        out.append("no Latin-script note outside English carries a diacritic")
    return out
