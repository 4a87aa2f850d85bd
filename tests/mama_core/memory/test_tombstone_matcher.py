"""The tombstone matcher on the labelled pairs (data/tombstone_pairs.json), through
the real engine: every *required* case is right — the retired text again, exactly
or nearly, is refused; its negation is saved. ``python -m bench.tombstone_matcher``
measures the rest (paraphrases, numbers, dates, names) as precision and recall."""

from __future__ import annotations

import numpy as np
import pytest

from bench.tombstone_matcher import load_pairs, saved_text
from mama_core.embeddings import Embedder
from mama_core.embeddings.base import score_scale
from mama_core.memory import Engine, TombstonedError
from mama_core.memory.tombstone_match import difference, near_duplicate
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, save


def _retire(engine: Engine, summary: str, kind: str, applies_when: str | None, scope: str) -> int:
    fields = {"scopes": [scope]}
    if applies_when is not None:
        fields["applies_when"] = applies_when  # type: ignore[assignment]
    jid = save(engine, summary, kind, **fields)["judgment_id"]
    receipt = engine.dispatch(
        "memory.retire",
        {"id": jid, "reason": "no longer true", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    return int(receipt["tombstone_id"])


def test_every_required_labelled_case_is_right(engine: Engine) -> None:
    pairs = [p for p in load_pairs() if p.required]
    assert len(pairs) >= 40
    assert {p.category for p in pairs} == {"exact", "near_exact", "negation"}
    scopes: dict[str, str] = {}
    wrong: list[str] = []
    refused = saved = 0
    for pair in pairs:
        if pair.retired not in scopes:
            scopes[pair.retired] = f"project:pair-{len(scopes)}"
            _retire(engine, pair.retired, pair.kind, pair.applies_when, scopes[pair.retired])
        fields: dict[str, object] = {"scopes": [scopes[pair.retired]]}
        if pair.applies_when is not None:
            fields["applies_when"] = pair.applies_when
        try:
            save(engine, pair.text, pair.kind, **fields)
        except TombstonedError:
            refused += 1
            if pair.label != "caught":
                wrong.append(f"refused its {pair.category}: {pair.retired!r} -> {pair.text!r}")
        else:
            saved += 1
            if pair.label != "passes":
                wrong.append(f"saved its {pair.category}: {pair.retired!r} -> {pair.text!r}")
    assert not wrong, "\n".join(wrong)
    # Both outcomes happened: the same path refuses the retired text and saves its negation.
    assert refused >= 20 and saved >= 20


def test_the_negation_passes_though_the_vectors_are_as_close_as_a_paraphrase(
    engine: Engine, embedder: Embedder
) -> None:
    when = "planning a release"
    threshold = score_scale(embedder).duplicate_threshold
    retired = np.asarray(embedder.embed_one(saved_text("Deploy on Fridays", when)))
    negation = np.asarray(embedder.embed_one(saved_text("Don't deploy on Fridays", when)))
    paraphrase = np.asarray(embedder.embed_one(saved_text("We deploy on Fridays", when)))
    # The case: cosine alone refuses the negation (0.93 here, 0.96 in the report).
    assert float(np.dot(retired, negation)) >= threshold
    assert float(np.dot(retired, paraphrase)) >= threshold
    _retire(engine, "Deploy on Fridays", "constraint", when, "global")
    with pytest.raises(TombstonedError) as info:
        save(engine, "We deploy on Fridays", "constraint", applies_when=when)
    assert info.value.details["similarity"] >= threshold
    for text in ("Don't deploy on Fridays", "Never deploy on Fridays"):
        assert save(engine, text, "constraint", applies_when=when)["status"] == "active"


@pytest.mark.parametrize(
    ("retired", "candidate", "why"),
    [
        ("Deploy on Fridays", "Don't deploy on Fridays", "opposite polarity (a negation)"),
        ("Never push to main", "Always push to main", "opposite polarity (a negation)"),
        ("Merging is allowed", "Merging is forbidden", "opposite polarity (a negation)"),
        ("Run the tests before a release", "Run the tests after a release", "opposite words"),
        ("Enable 2FA for admins", "Disable 2FA for admins", "opposite words"),
        ("Standup is at 9:30", "Standup is at 10:00", "different numbers"),
        ("Use four spaces", "Use two spaces", "different numbers"),
        ("The budget is $5,000", "The budget is $8,000", "different numbers"),
        ("Report on Mondays", "Report on Thursdays", "different dates or times"),
        ("The limit is 100 per minute", "The limit is 100 per hour", "different dates or times"),
        ("We host on AWS", "We host on GCP", "different names"),
        ("The owner of billing is Alice", "The owner of billing is Bob", "different names"),
        # The same cues in the other languages owners write in.
        ("Reply in German", "Antworte nicht auf Deutsch", "opposite polarity (a negation)"),
        ("Deploy on Fridays", "Ne jamais déployer le vendredi", "opposite polarity (a negation)"),
        ("Deploy on Fridays", "금요일에는 배포하지 않기", "opposite polarity (a negation)"),
        ("Deploy on Fridays", "金曜日はデプロイ禁止", "opposite polarity (a negation)"),
        ("Deploy on Fridays", "星期五不要部署", "opposite polarity (a negation)"),
        ("Deploy on Fridays", "Не деплоить по пятницам", "opposite polarity (a negation)"),  # noqa: RUF001
        ("Deploy on Fridays", "Deploy am Dienstag", "different dates or times"),
        ("Reply in German", "Réponds en anglais", "different languages"),
        ("Reply in German", "한국어로 답하기", "different languages"),
        ("The office is open on Saturdays", "Das Büro ist samstags geschlossen", "opposite words"),
        ("Keep logs for 30 days", "Logs 90 Tage aufbewahren", "different numbers"),
        ("We host on AWS", "Wir hosten auf GCP", "different names"),
    ],
)
def test_what_tells_two_texts_apart(retired: str, candidate: str, why: str) -> None:
    assert difference(retired, candidate) == why
    assert not near_duplicate(retired, candidate, 0.99, 0.92)


@pytest.mark.parametrize(
    ("retired", "candidate"),
    [
        ("Never deploy on Fridays", "Do not deploy on Fridays"),
        ("Never deploy on Fridays", "NEVER deploy on a Friday!"),
        ("Use four spaces for indentation", "Use 4 spaces for indentation"),
        ("Keep logs for 30 days", "Keep logs for thirty days"),
        ("Standup is at 10:00", "Standup is at 10"),
        ("Send the summary on Monday morning", "Send the summary on Monday mornings"),
        ("Host production on AWS", "Production is hosted on AWS"),
        ("Prefer short answers in Telegram", "Prefer brief answers on Telegram"),
        ("You MUST use uv", "Use uv"),
        ("Deploy on Fridays", "Deploy on Fridays, no exceptions"),
        ("Reply within 2 days", "Reply no later than 2 days"),
        # Translations state the same thing; German nouns are not names.
        ("Reply in German", "Antworte auf Deutsch"),
        ("Reply in German", "Réponds en allemand"),
        ("Deploy on Fridays", "Am Freitag deployen"),
        ("Deploy on Fridays", "金曜日にデプロイ"),
        ("Send the summary on Monday morning", "Die Zusammenfassung am Montagmorgen senden"),
        ("Send the summary on Monday morning", "월요일 아침에 요약 보내기"),
        ("We host on AWS", "Wir hosten auf AWS"),
        ("Keep logs for 30 days", "Logs 30 Tage aufbewahren"),
        ("Do not merge on Fridays", "Freitags nicht mergen"),
    ],
)
def test_rewordings_with_the_same_cues_are_still_caught(retired: str, candidate: str) -> None:
    assert difference(retired, candidate) is None
    assert near_duplicate(retired, candidate, 0.95, 0.92)
    # Positive control: below the threshold nothing matches, whatever the words.
    assert not near_duplicate(retired, candidate, 0.91, 0.92)


def test_a_tombstone_whose_text_is_gone_falls_back_to_the_cosine() -> None:
    assert near_duplicate(None, "Never deploy on Fridays", 0.95, 0.92)
    assert not near_duplicate(None, "Never deploy on Fridays", 0.90, 0.92)
