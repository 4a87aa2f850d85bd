"""memory.quotes (owner): the observations that quote a judgment, so purging the
judgment can offer to purge them too.

An unpurged observation *quotes* judgment J when

- ``source``: J's provenance names it (``obs:N``): the message J was saved from;
- ``reply``: it is the text MAMA sent back (reply or notice) for the input whose
  observation is J's source — the answer of the turn that saved J;
- ``text``: its text contains J's summary, or J's details when they are at least
  ``MIN_DETAILS`` characters — compared without case and with runs of
  whitespace collapsed. This finds the owner's messages that state it
  (``/remember …``), MAMA's replies and review cards' texts that repeat it,
  and connector items that contain it;
- ``words``: every word of its text (but a leading ``/command`` and a few
  function words) is a word of J, and one of them is not short (at least
  ``MIN_WORD`` characters, or a number): the owner's ``/search quagmirette`` or
  ``/recall locker code`` for J, which says J's words without quoting it whole.

A proposal card (a delivery with ``judgment_id``) keeps no text of its own: it is
rendered from the judgment, so purging the judgment erases it. What was sent back
for an input is the app's to say (its runtime's tables): the engine is given its
read (``Engine(replies=...)``, ``app.durable.journal.reply_observations``).
"""

from __future__ import annotations

import re
from typing import Any

from mama_core.memory.actions.observation_reads import COLUMNS, observation_of
from mama_core.memory.dispatcher import Call, Env, ReplyReader, query
from mama_core.memory.inputs import QuotesInput
from mama_core.memory.records import load_visible, predecessors
from mama_core.memory.results import QuotesResult, QuotingObservation
from mama_core.model import Judgment
from mama_core.store.connection import Connection

MIN_SUMMARY = 4
MIN_DETAILS = 20
SOURCE_PREFIX = "obs:"
MIN_WORD = 4
_WORD = re.compile(r"\w+")
_COMMAND = re.compile(r"^\s*/\w+(@\w+)?")
FUNCTION_WORDS = frozenset(
    """a an and are at be for from i in is it me my of on or our the to we what when where
    who why how with you your please about""".split()  # noqa: SIM905
)


def normalised(text: str) -> str:
    """Case-folded, with every run of whitespace one space."""
    return " ".join(text.casefold().split())


def _needles(j: Judgment) -> list[str]:
    needles: list[str] = []
    summary = normalised(j.summary)
    if len(summary) >= MIN_SUMMARY:
        needles.append(summary)
    details = normalised(j.details)
    if len(details) >= MIN_DETAILS:
        needles.append(details)
    return needles


def words_of(text: str) -> set[str]:
    """The words of ``text`` (case-folded), without a leading command and function words."""
    body = _COMMAND.sub("", text, count=1)
    return {w for w in _WORD.findall(body.casefold()) if w not in FUNCTION_WORDS}


def _judgment_words(j: Judgment) -> set[str]:
    return words_of(" ".join([j.topic, j.summary, j.details, j.applies_when or ""]))


def says_words_of(text_words: set[str], judgment_words: set[str]) -> bool:
    """Whether a message made only of the judgment's words names it (``words``)."""
    if not text_words or not text_words <= judgment_words:
        return False
    return any(len(w) >= MIN_WORD or w.isdigit() for w in text_words)


def _source_ids(j: Judgment) -> list[int]:
    refs: list[Any] = j.provenance.get("source_refs") or []
    ids: list[int] = []
    for ref in refs:
        if isinstance(ref, str) and ref.startswith(SOURCE_PREFIX):
            number = ref[len(SOURCE_PREFIX) :]
            if number.isdigit():
                ids.append(int(number))
    return ids


def quoting(
    conn: Connection, judgments: list[Judgment], replies: ReplyReader
) -> list[QuotingObservation]:
    """The unpurged observations quoting any of ``judgments``, oldest first, each with
    ``quotes`` (the judgment ids) and ``why`` (source, reply, text); ``replies`` is the
    app's read of what was sent back for an input (its runtime's tables)."""
    found: dict[int, dict[str, set[Any]]] = {}

    def note(observation_id: int, judgment_id: int, why: str) -> None:
        entry = found.setdefault(observation_id, {"quotes": set(), "why": set()})
        entry["quotes"].add(judgment_id)
        entry["why"].add(why)

    needles = [(j.id, n) for j in judgments for n in _needles(j)]
    vocabularies = [(j.id, _judgment_words(j)) for j in judgments]
    for j in judgments:
        sources = _source_ids(j)
        for oid in sources:
            note(oid, j.id, "source")
        for oid in replies(conn, sources) if sources else []:
            note(oid, j.id, "reply")
    cursor = conn.execute("SELECT id, text FROM observations WHERE purged_at IS NULL")
    for oid, text in cursor:
        flat = normalised(str(text))
        quoted = {jid for jid, needle in needles if needle in flat}
        for jid in quoted:
            note(int(oid), jid, "text")
        said = words_of(str(text))
        for jid, vocabulary in vocabularies:
            if jid not in quoted and says_words_of(said, vocabulary):
                note(int(oid), jid, "words")
    if not found:
        return []
    marks = ", ".join("?" for _ in found)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM observations o WHERE o.id IN ({marks}) "
        "AND o.purged_at IS NULL ORDER BY o.id",
        list(found),
    ).fetchall()
    result: list[QuotingObservation] = []
    for row in rows:
        item = observation_of(row)
        entry = found[item.id]
        result.append(
            QuotingObservation(
                **item.model_dump(exclude_unset=True),
                quotes=sorted(entry["quotes"]),
                why=sorted(entry["why"]),
            )
        )
    return result


@query(
    "memory.quotes",
    QuotesInput,
    description="The observations (messages) that quote a judgment, to purge with it.",
    owner_only=True,
)
def quotes(conn: Connection, call: Call[QuotesInput], env: Env) -> QuotesResult:
    inp = call.input
    target = load_visible(conn, inp.id, call.grant)
    chain = [target]
    if inp.include_chain:
        chain += [load_visible(conn, pid, call.grant) for pid in predecessors(conn, target.id)]
    return QuotesResult(id=target.id, observations=quoting(conn, chain, env.replies))
