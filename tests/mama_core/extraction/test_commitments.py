"""Commitments read without a model (``mama_core.extraction.commitments``): who owes
whom what by when, and the forms that state none — each negative beside a positive
control in the same words."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mama_core.extraction import FoundCommitment, Message, find_commitments
from mama_core.extraction.commitments import visible_text

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)


def found(text: str, author: str = "Bob", audience: str = "#ops") -> list[FoundCommitment]:
    return find_commitments(Message(text, author, WEDNESDAY, audience, 7), BERLIN)


def one(text: str, **kwargs: str) -> FoundCommitment:
    hits = found(text, **kwargs)
    assert len(hits) == 1, hits
    return hits[0]


@pytest.mark.parametrize(
    ("text", "owed_by", "due", "what"),
    [
        ("I'll send you the deck by Friday", "Bob", "2026-12-04 17:00", "send you the deck"),
        ("Anna will review it tomorrow", "Anna", "2026-12-03 17:00", "review it"),
        ("Ich schicke dir das bis Montag", "Bob", "2026-12-07 17:00", "schicke dir das"),
        ("Je t'envoie le rapport demain", "Bob", "2026-12-03 17:00", "envoie le rapport"),
        ("Te mando el informe el viernes", "Bob", "2026-12-04 17:00", "mando el informe"),
        (
            "Ich werde das Deck bis Freitag schicken.",
            "Bob",
            "2026-12-04 17:00",
            "das Deck schicken",
        ),
    ],
)
def test_the_recognisable_forms(text: str, owed_by: str, due: str, what: str) -> None:
    hit = one(text)
    assert (hit.owed_by, hit.owed_to, hit.what) == (owed_by, "#ops", what)
    assert hit.due is not None and hit.due.strftime("%Y-%m-%d %H:%M") == due
    assert hit.observation_id == 7
    assert text[hit.start : hit.end] == text.strip()


@pytest.mark.parametrize(
    ("negative", "control"),
    [
        ("Will you send the deck by Friday?", "I will send the deck by Friday."),
        ("Can you send the deck by Friday?", "I'll send the deck by Friday."),
        ("If I have time I'll send the deck by Friday.", "I'll send the deck by Friday."),
        ("Maybe I'll send the deck by Friday.", "I'll send the deck by Friday."),
        ("I sent the deck yesterday.", "I'll send the deck tomorrow."),
        ("I won't send the deck by Friday.", "I'll send the deck by Friday."),
        ("I'll send the deck by Friday lol", "I'll send the deck by Friday."),
        ("As I said, I'll send the deck by Friday.", "As agreed, I'll send the deck by Friday."),
        ("Anna will be out tomorrow.", "Anna will send it tomorrow."),
        ("The deck will be ready tomorrow.", "Anna will have the deck ready tomorrow."),
        ("We'll ship on Thursday.", "I'll ship it on Thursday."),
        ("Wenn ich Zeit habe, schicke ich es morgen.", "Ich schicke es morgen."),
        ("Ich schicke dir anbei die Unterlagen.", "Ich schicke dir die Unterlagen morgen."),
        (
            "Die Präsentation wird morgen verschickt.",
            "Anna wird die Präsentation morgen verschicken.",
        ),
        ("Si j'ai le temps, je t'envoie le rapport demain.", "Je t'envoie le rapport demain."),
        ("Je ne vais pas envoyer le rapport demain.", "Je vais envoyer le rapport demain."),
        ("Ya preparé el informe.", "Prepararé el informe mañana."),
        ("¿Me mandas el informe mañana?", "Te mando el informe mañana."),
    ],
)
def test_forms_that_state_no_commitment(negative: str, control: str) -> None:
    assert found(negative) == []
    assert len(found(control)) == 1


def test_quoted_words_are_not_the_authors() -> None:
    reply = (
        "Thanks, noted.\n\nOn Wed, Dec 2, 2026 at 9:00 AM Anna wrote:\n"
        "> I'll send you the deck by Friday."
    )
    assert found(reply) == []
    assert found('"I\'ll send you the deck by Friday" is what he said.') == []
    assert found("> I'll send you the deck by Friday\nOk") == []
    # Control: the author's own line above the quote is read, and its span is true.
    mixed = "I'll send the agenda tonight.\n\nOn Wed, Anna wrote:\n> I'll send the deck"
    (hit,) = found(mixed)
    assert mixed[hit.start : hit.end] == "I'll send the agenda tonight."
    assert hit.due is not None and hit.due.hour == 19


def test_to_whom_is_the_person_addressed_else_the_audience() -> None:
    assert one("Anna, I'll send the deck by Friday.").owed_to == "Anna"
    assert one("@anna I'll send the deck by Friday.").owed_to == "@anna"
    assert one("Hi Anna, I'll send the deck by Friday.").owed_to == "Anna"
    # An interjection is no name; unaddressed, it is owed to the audience (mail: the owner).
    assert one("Sure, I'll send the deck by Friday.").owed_to == "#ops"
    assert one("Update: I'll send the deck by Friday.").owed_to == "#ops"
    assert one("update: I'll send the deck by Friday.").owed_to == "#ops"
    assert one("I'll send the deck by Friday.", audience="owner").owed_to == "owner"


def test_two_promises_in_one_sentence_keep_their_own_dates() -> None:
    first, second = found("I'll write the postmortem and Anna will review it on Monday.")
    assert (first.owed_by, first.due) == ("Bob", None)
    assert second.owed_by == "Anna"
    assert second.due is not None and second.due.date().isoformat() == "2026-12-07"


def test_a_date_leading_the_sentence_counts() -> None:
    hit = one("Tomorrow I'll send the deck.")
    assert hit.due is not None and hit.due.date().isoformat() == "2026-12-03"


def test_an_acknowledgement_promises_what_was_asked() -> None:
    hit = one("Klar, kein Problem, ich erledige das.", author="Jonas")
    assert (hit.owed_by, hit.what, hit.due) == (
        "Jonas",
        "Klar, kein Problem, ich erledige das.",
        None,
    )
    assert found("Klar, das ist kein Problem.") == []


def _words(text: str) -> list[str]:
    return text.split(" ")


WORDS = st.sampled_from(
    _words(
        "I'll I will Anna will Ich werde schicke ich Je vais t'envoie Te mando voy a send the "
        "deck tomorrow Friday morgen demain mañana el viernes by at 3pm um 15 Uhr à 9h if ? ! . "
        ', \n > " “ ” « » lol not nicht ne pas no 5.12. 2026-12-05 next week Hi '
        "@bob Bob,"
    )
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS | st.text(max_size=8), max_size=40))
def test_any_text_gives_well_formed_findings(parts: list[str]) -> None:
    """Whatever arrives, the finder returns findings whose spans lie in the text, never
    in quoted words, each with a debtor and an aware due (or none) — it never raises."""
    text = " ".join(parts)
    visible = visible_text(text)
    for hit in find_commitments(Message(text, "Bob", WEDNESDAY, "#ops", 1), BERLIN):
        assert 0 <= hit.start < hit.end <= len(text)
        assert visible[hit.start : hit.end].strip()
        assert hit.owed_by and hit.owed_to
        assert hit.due is None or hit.due.tzinfo is not None


def test_a_wall_of_text_is_not_read_but_its_sentences_are() -> None:
    wall = "ich werde das " * 100  # one 1400-character "sentence" with no end
    assert found(wall + "schicken.") == []
    # Control: the same promise in a sentence of its own is read.
    assert len(found(wall[:600].rsplit(" ", 3)[0] + ". Ich werde das morgen schicken.")) == 1
