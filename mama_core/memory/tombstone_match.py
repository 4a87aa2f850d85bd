"""Does a reworded save say what a tombstoned text said, or something else?

A sentence embedding scores "Deploy on Fridays" and "Never deploy on Fridays"
as near-duplicates (cosine 0.93 with all-MiniLM-L6-v2), so a cosine threshold
alone refuses the negation of a retired rule. Before a cosine-close save is
refused, ``difference`` compares the two texts on the cues an embedding blurs:
polarity (negation words), opposite words, numbers, calendar words and names.
Any difference means the save states something else and it is let through;
the same normalised text (the fingerprint) is refused without these checks.

The checks are word lists, local and explainable; each returns the reason it
found. They err towards letting a save through: a missed paraphrase can be
retired again, a refused negation cannot be said at all.

Owners write in several languages and a multilingual model puts a translation
next to its original, so the cues are multilingual too: negation, calendar
words, opposites and language names in German, French, Spanish, Portuguese,
Russian, Greek, Arabic, Hebrew, Hindi, Chinese, Japanese and Korean map onto
the same families as the English ones ("Freitag" and "金曜日" are both Friday).
Scripts written without spaces (Chinese, Japanese) and Korean's word endings
are matched as substrings. Capitalised German nouns are not names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from mama_core.recall.stopwords import STOPWORDS


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NEGATORS: frozenset[str] = frozenset(
    _words(
        "not no never cannot without nobody nothing none neither nor nowhere "
        "avoid avoids avoided avoiding forbid forbids forbidden forbidding "
        "prohibit prohibits prohibited ban bans banned disallow disallows disallowed"
    )
)
"""Words that flip what a sentence states; ``-n't`` contractions count too."""

NEGATORS_OTHER: frozenset[str] = frozenset(
    _words(
        # German
        "nicht kein keine keinen keinem keiner keines nie niemals nichts niemand ohne "
        "verboten vermeiden "
        # French ("ne" and "n'" pair with "pas", so only the second half counts)
        "pas jamais aucun aucune rien sans interdit interdite éviter "
        # Spanish, Portuguese
        "nunca jamás ningún ninguna ninguno nada nadie sin prohibido prohibida evitar "
        "não jamais nenhum nenhuma ninguém sem proibido proibida "
        # Russian, Greek, Arabic, Hebrew, Hindi
        "не нет никогда нельзя без запрещено "
        "δεν μη μην ποτέ χωρίς απαγορεύεται "
        "لا لم لن ليس ليست ممنوع بدون "
        "לא אין אסור בלי "
        "नहीं न मत बिना कभी"
    )
)
"""Negation words of the other languages owners write in, matched as whole words."""

NEGATION_PARTS = re.compile(
    # Japanese: しないで before ない so one negation counts once.
    r"しないで|ないで|ません|なかった|ない|禁止"
    # Chinese
    r"|不要|没有|不|没|勿"
    # Korean: 않 (하지 않다), 못, 마세요/말고 (prohibitive), 없 (without), 금지
    r"|않|못|마세요|마십시오|말고|말라|없이|없다|금지"
)
"""Negations inside words: Chinese and Japanese have no spaces, Korean attaches them."""

NOT_NEGATING = re.compile(
    r"\b(?:no exceptions?|without (?:exception|fail)|no matter|not only|no doubt"
    r"|no (?:later|earlier|more|less|fewer) than|not (?:later|earlier|more|less|fewer) than)\b"
)
"""Phrases with a negation word that negate nothing ("no exceptions", "no later than");
without this, adding one would be a way around a tombstone."""

OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(_words(a)), frozenset(_words(b)))
    for a, b in (
        (
            "enable enabled enables enabling aktivieren activer activar ativar",
            "disable disabled disables disabling deaktivieren désactiver desactivar desativar",
        ),
        ("before vor avant antes", "after nach après después depois"),
        ("include included includes including", "exclude excluded excludes excluding"),
        (
            "short shorter shortest brief briefer kurz kürzer court courte courts courtes "
            "corto corta cortos cortas curto curta curtos curtas короткий короткие",
            "long longer longest lengthy lang lange länger longue longues largo larga largos "
            "largas longo longa longos longas длинный длинные",
        ),
        ("more most mehr plus más mais", "less least fewer fewest weniger moins menos"),
        ("increase increased increases raise", "decrease decreased decreases reduce"),
        ("true wahr vrai verdadero verdadeiro", "false falsch faux falso"),
        ("required mandatory pflicht obligatoire obligatorio obrigatório", "optional optionnel"),
        ("public öffentlich", "private privat privé privado"),
        ("early earlier earliest früh früher tôt temprano cedo", "late later latest spät tard"),
        ("minimum min", "maximum max"),
        (
            "accept accepted accepts approve approved genehmigen genehmigt accepter approuver "
            "aprobar aprueba aprovar aprova",
            "reject rejected rejects decline declined ablehnen abgelehnt lehnt rejeter refuser "
            "rechazar rechaza rejeitar rejeita",
        ),
        (
            "good better best gut besser bon bien bueno bom",
            "bad worse worst schlecht mauvais malo mau",
        ),
        (
            "safe sicher sûr seguro",
            "unsafe dangerous unsicher gefährlich dangereux peligroso perigoso",
        ),
        (
            "add added adds hinzufügen ajouter añadir adicionar",
            "remove removed removes entfernen supprimer eliminar remover",
        ),
        ("start starts started", "stop stops stopped end ends"),
        (
            "first erste ersten premier première primero primera primeiro primeira",
            "last letzte letzten dernier dernière último última",
        ),
        (
            "open opened opens offen geöffnet öffnen ouvert ouverte ouvrir abierto abierta "
            "abrir aberto aberta открыт открыто",
            "close closed closes geschlossen schließen fermé fermée fermer cerrado cerrada "
            "cerrar fechado fechada fechar закрыт закрыто",
        ),
        ("uppercase", "lowercase"),
        ("sync synchronous synchronously", "async asynchronous asynchronously"),
        ("economy turista эконом", "business"),
    )
)
"""Pairs of word families: one side in the retired text and the other in the save."""

NUMBER_WORDS: dict[str, str] = {
    word: str(value)
    for value, word in enumerate(
        _words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90"}

CALENDAR_WORDS: dict[str, str] = {
    word: word
    for word in _words(
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend "
        "january february march april june july august september october november december "
        "second minute hour day week month quarter year "
        "morning afternoon evening night noon midnight"
    )
} | {
    "hourly": "hour",
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "quarterly": "quarter",
    "yearly": "year",
    "annual": "year",
    "annually": "year",
}
"""Days, months, time units and parts of the day ("may" is left out: it is a verb too)."""

_CALENDAR_OTHER_SOURCE: dict[str, str] = {
    "monday": "montag lundi lunes segunda понедельник δευτέρα الاثنين שני सोमवार",
    "tuesday": "dienstag mardi martes terça вторник τρίτη الثلاثاء שלישי मंगलवार",
    "wednesday": "mittwoch mercredi miércoles quarta среда τετάρτη الأربعاء רביעי बुधवार",
    "thursday": "donnerstag jeudi jueves quinta четверг πέμπτη الخميس חמישי गुरुवार",
    "friday": "freitag vendredi viernes sexta пятница παρασκευή الجمعة שישי शुक्रवार",
    "saturday": "samstag sonnabend samedi sábado sabado суббота σάββατο السبت שבת शनिवार",
    "sunday": "sonntag dimanche domingo воскресенье κυριακή الأحد ראשון रविवार",
    "weekend": "wochenende fin-de-semana",
    "january": "januar janvier enero janeiro январь января",
    "february": "februar février febrero fevereiro февраль февраля",
    "march": "märz mars marzo março март марта",
    "april": "avril abril апрель апреля",
    "june": "juni juin junio junho июнь июня",
    "july": "juli juillet julio julho июль июля",
    "august": "août agosto август августа",
    "september": "septembre septiembre setembro сентябрь сентября",
    "october": "oktober octobre octubre outubro октябрь октября",
    "november": "novembre noviembre novembro ноябрь ноября",
    "december": "dezember décembre diciembre dezembro декабрь декабря",
    "hour": "stunde stunden heure heures hora horas час часа часов stündlich",
    "day": "tag tage tagen jour jours día días dia dias день дня дней "
    "täglich quotidien diario diário",
    "week": "woche wochen semaine semaines semana semanas неделя недели недель "
    "wöchentlich hebdomadaire semanal еженедельно",
    "month": "monat monate monaten mois meses месяц месяца месяцев "
    "monatlich mensuel mensual mensal",
    "year": "jahr jahre jahren année années año años ano anos год года лет jährlich annuel anual",
    "morning": "morgen morgens vormittag matin mañana manhã утро утром",
    "afternoon": "nachmittag après-midi tarde",
    "evening": "abend abends soir noche noite вечер вечером",
    "night": "nacht nachts nuit ночь ночью",
}
CALENDAR_OTHER: dict[str, str] = {
    word: canonical for canonical, words in _CALENDAR_OTHER_SOURCE.items() for word in _words(words)
}
"""The calendar words of other written-with-spaces languages, onto the English family."""

_GERMAN_COMPOUND_CALENDAR: dict[str, str] = {
    word: CALENDAR_OTHER[word]
    for word in _words(
        "montag dienstag mittwoch donnerstag freitag samstag sonntag woche monat jahr "
        "morgen abend nacht nachmittag vormittag"
    )
}
"""German glues these onto other words ("Montagmorgen", "Wochenbericht")."""

CALENDAR_PARTS: dict[str, str] = {
    part: canonical
    for canonical, parts in {
        "monday": "月曜日 月曜 星期一 周一 週一 월요일",
        "tuesday": "火曜日 火曜 星期二 周二 週二 화요일",
        "wednesday": "水曜日 水曜 星期三 周三 週三 수요일",
        "thursday": "木曜日 木曜 星期四 周四 週四 목요일",
        "friday": "金曜日 金曜 星期五 周五 週五 금요일",
        "saturday": "土曜日 土曜 星期六 周六 週六 토요일",
        "sunday": "日曜日 日曜 星期日 星期天 周日 週日 일요일",
        "weekend": "週末 周末 주말",
        "week": "毎週 週間 每周 주간 매주",
        "month": "毎月 每月 매월 매달",
        "year": "毎年 每年 매년",
        "day": "毎日 每天 매일",
        "morning": "午前 朝 早上 上午 오전 아침",
        "afternoon": "午後 下午 오후",
        "evening": "夕方 晚上 저녁",
        "night": "夜 夜间 밤",
    }.items()
    for part in _words(parts)
}
"""Calendar words inside Chinese, Japanese and Korean text, found as substrings."""

_CALENDAR_PART = re.compile("|".join(sorted(map(re.escape, CALENDAR_PARTS), key=len, reverse=True)))

_LANGUAGE_SOURCE: dict[str, str] = {
    "english": "english englisch anglais inglés ingles inglês английский английском "
    "영어 英語 英语 英文",
    "german": "german deutsch allemand alemán aleman alemão немецкий немецком "
    "독일어 ドイツ語 德语 德文",
    "french": "french französisch français francais francés frances francês французский "
    "французском 프랑스어 フランス語 法语 法文",
    "spanish": "spanish spanisch espagnol español espanol espanhol испанский испанском "
    "스페인어 スペイン語 西班牙语",
    "portuguese": "portuguese portugiesisch portugais portugués português португальский "
    "포르투갈어 ポルトガル語 葡萄牙语",
    "russian": "russian russisch russe ruso russo русский русском 러시아어 ロシア語 俄语",
    "japanese": "japanese japanisch japonais japonés japonês японский 일본어 日本語 日语",
    "korean": "korean koreanisch coréen coreano корейский 한국어 韓国語 韩语",
    "chinese": "chinese chinesisch chinois chino chinês китайский 중국어 中国語 中文 汉语",
}
LANGUAGE_WORDS: dict[str, str] = {
    word: canonical for canonical, words in _LANGUAGE_SOURCE.items() for word in _words(words)
}
"""Names of languages in the languages themselves: "reply in German" and "auf Deutsch"
name the same language, "in French" another."""

_NO_SPACE_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_LANGUAGE_PART = re.compile(
    "|".join(
        sorted(
            (re.escape(w) for w in LANGUAGE_WORDS if _NO_SPACE_SCRIPT.search(w)),
            key=len,
            reverse=True,
        )
    )
)

GERMAN_MARKERS: frozenset[str] = frozenset(
    _words(
        "der die das den dem des und ist nicht mit für auf im am zu von bei ein eine einen "
        "mir mich keine kein wir ich sie"
    )
)
ENGLISH_MARKERS: frozenset[str] = frozenset(
    _words("the a an and is are to of in on for me my with be before after do not use we i you it")
)
"""A few frequent words to tell German (whose nouns are all capitalised) from English."""

EMPHASIS_WORDS: frozenset[str] = frozenset(
    _words(
        "a all always and any are at be do every for important in is must of on only or the to use"
    )
)
"""Words written in capitals for emphasis ("you MUST"), which are not names."""

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD_OR_NUMBER = re.compile(r"[^\W_]+(?:'[^\W\d_]+)?")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][\w-]*)")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")


@dataclass(frozen=True)
class Cues:
    """What ``difference`` compares in one text."""

    negations: int
    words: frozenset[str]
    numbers: frozenset[str]
    calendar: frozenset[str]
    names: frozenset[str]
    languages: frozenset[str]


def cues(text: str) -> Cues:
    """The polarity, words, numbers, calendar words, names and named languages of ``text``."""
    plain = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    folded = plain.casefold()
    tokens = _WORD.findall(folded)
    unquoted = NOT_NEGATING.sub(" ", folded)
    negating = _WORD.findall(unquoted)
    negations = sum(
        1 for t in negating if t in NEGATORS or t in NEGATORS_OTHER or t.endswith("n't")
    )
    negations += len(NEGATION_PARTS.findall(unquoted))
    numbers = {_number(n) for n in _NUMBER.findall(plain)}
    numbers |= {NUMBER_WORDS[t] for t in tokens if t in NUMBER_WORDS}
    calendar = {c for c in (_calendar(t) for t in tokens) if c is not None}
    calendar |= {c for t in tokens for c in _compound_calendar(t)}
    calendar |= {CALENDAR_PARTS[m] for m in _CALENDAR_PART.findall(folded)}
    languages = {LANGUAGE_WORDS[t] for t in tokens if t in LANGUAGE_WORDS}
    if _LANGUAGE_PART.pattern:
        languages |= {LANGUAGE_WORDS[m] for m in _LANGUAGE_PART.findall(folded)}
    return Cues(
        negations=negations,
        words=frozenset(tokens),
        numbers=frozenset(numbers),
        calendar=frozenset(calendar),
        names=frozenset(_names(plain, german=_is_german(tokens))),
        languages=frozenset(languages),
    )


def numbers_in_order(text: str) -> tuple[str, ...]:
    """The numbers of ``text`` in the order written, normalised as ``cues`` does ("item 1
    of batch 2" is not "item 2 of batch 1", though their sets of numbers agree)."""
    plain = unicodedata.normalize("NFKC", text)
    return tuple(_number(n) for n in _NUMBER.findall(plain))


def difference(retired: str, candidate: str) -> str | None:
    """Why ``candidate`` states something other than ``retired``, or None if nothing
    tells them apart (then the cosine decides)."""
    old, new = cues(retired), cues(candidate)
    if old.negations % 2 != new.negations % 2:
        return "opposite polarity (a negation)"
    for side_a, side_b in OPPOSITES:
        if _opposed(old.words, new.words, side_a, side_b):
            return "opposite words"
    for what, before, after in (
        ("numbers", old.numbers, new.numbers),
        ("dates or times", old.calendar, new.calendar),
        ("languages", old.languages, new.languages),
        ("names", old.names - LANGUAGE_WORDS.keys(), new.names - LANGUAGE_WORDS.keys()),
    ):
        if before and after and before != after:
            return f"different {what}"
    return None


SUBSTITUTION_MAX = 3
"""At most this many words on each side of a swap (more: a rewording)."""


def _substitution(retired: str, candidate: str) -> str | None:
    """The same sentence, word for word, with one run of its words swapped for another.

    e5 scores "Use the staging server for demos" and "Use the production server for
    demos" at 0.98, closer than most paraphrases, yet the save states another fact.
    A paraphrase rewords or reorders ("Demos run on the staging server"); a new fact
    keeps the sentence and swaps what it is about. So when everything but one run
    of at most ``SUBSTITUTION_MAX`` words is the same, in the same order, around at
    least one shared content word ("Deploy from main" after "Deploy from the release
    branch"), the swap is what the save says: let it through.
    A synonym swapped in place ("remain" for "stay") passes too; the matcher errs
    towards saving, and the owner can retire it again. Texts in different scripts
    share no words and are never held here.
    """
    old = _WORD_OR_NUMBER.findall(unicodedata.normalize("NFKC", retired).casefold())
    new = _WORD_OR_NUMBER.findall(unicodedata.normalize("NFKC", candidate).casefold())
    changes = [op for op in SequenceMatcher(None, old, new, autojunk=False).get_opcodes()]
    edits = [op for op in changes if op[0] != "equal"]
    if len(edits) != 1 or edits[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = edits[0]
    if i2 - i1 > SUBSTITUTION_MAX or j2 - j1 > SUBSTITUTION_MAX:
        return None
    kept = {w for op in changes if op[0] == "equal" for w in old[op[1] : op[2]]}
    if len(kept - STOPWORDS) < 1 or _said_alike(old[i1:i2]) == _said_alike(new[j1:j2]):
        return None
    return f"a swapped word ({' '.join(old[i1:i2])} -> {' '.join(new[j1:j2])})"


_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ORDINAL_WORDS: dict[str, str] = {
    word: str(value)
    for value, word in enumerate(
        _words("first second third fourth fifth sixth seventh eighth ninth tenth"), start=1
    )
}
_RATE_WORDS: frozenset[str] = frozenset({"per", "each", "every"})
""""100 a minute", "per minute", "each minute": the same rate."""


def _said_alike(words: Sequence[str]) -> frozenset[str]:
    """A swapped run as what it means for ``_substitution``: function words and negators
    dropped (polarity is checked before), plurals folded, numbers as digits ("four
    spaces" and "4 space" are alike; "in"/"on", "every"/"each" are nothing)."""
    kept: set[str] = set()
    for word in words:
        if word in STOPWORDS or word in NEGATORS or word in EMPHASIS_WORDS or word in _RATE_WORDS:
            continue
        ordinal = _ORDINAL.match(word)
        meant = NUMBER_WORDS.get(word) or _ORDINAL_WORDS.get(word)
        meant = meant or (ordinal.group(1) if ordinal else word)
        kept.add(meant[:-1] if len(meant) > 3 and meant.endswith("s") else meant)
    return frozenset(kept)


def _opposed(
    old: frozenset[str], new: frozenset[str], a: frozenset[str], b: frozenset[str]
) -> bool:
    def side(words: frozenset[str]) -> str | None:
        has_a, has_b = bool(words & a), bool(words & b)
        return None if has_a == has_b else ("a" if has_a else "b")

    before, after = side(old), side(new)
    return before is not None and after is not None and before != after


def _number(raw: str) -> str:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", raw):
        raw = raw.replace(",", "")
    raw = raw.replace(",", ".")
    if raw.endswith(":00"):
        raw = raw[:-3]  # 10:00 is 10
    if re.fullmatch(r"\d+\.0+", raw):
        raw = raw.split(".")[0]
    head, sep, tail = raw.partition(":")
    return (head.lstrip("0") or "0") + sep + tail


def _calendar(token: str) -> str | None:
    if token in CALENDAR_WORDS:
        return CALENDAR_WORDS[token]
    if token in CALENDAR_OTHER:
        return CALENDAR_OTHER[token]
    if token.endswith("s") and token[:-1] in CALENDAR_WORDS:
        return CALENDAR_WORDS[token[:-1]]
    compound = _compound_calendar(token)
    return min(compound) if compound else None


def _compound_calendar(token: str) -> set[str]:
    """The calendar words glued at either end of a German compound ("montagmorgen")."""
    return {
        canonical
        for part, canonical in _GERMAN_COMPOUND_CALENDAR.items()
        if len(token) > len(part) and (token.startswith(part) or token.endswith(part))
    }


def _is_german(tokens: list[str]) -> bool:
    """More of German's frequent words than of English's (a tie is English)."""
    german = sum(1 for t in tokens if t in GERMAN_MARKERS)
    return german > sum(1 for t in tokens if t in ENGLISH_MARKERS)


def _names(text: str, *, german: bool = False) -> set[str]:
    """Capitalised words inside a sentence and all-capital words anywhere (AWS, EU),
    casefolded; a sentence's first word is not a name unless it is all capitals.
    German capitalises every noun, so there only all-capital and mixed-case words
    (AWS, MySQL) count."""
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        word = match.group(1)
        folded = word.casefold()
        if (
            folded in NEGATORS
            or folded in NUMBER_WORDS
            or _calendar(folded) is not None
            or folded == "i"
            or folded in EMPHASIS_WORDS
            or folded in NEGATORS_OTHER
        ):
            continue
        all_caps = len(word) > 1 and word.isupper()
        if german:
            if all_caps or any(ch.isupper() for ch in word[1:]):
                found.add(folded)
            continue
        starts_sentence = match.start() == 0 or bool(_SENTENCE_END.search(text[: match.start()]))
        if all_caps or not starts_sentence:
            found.add(folded)
    return found


def near_duplicate(
    retired: str | None,
    candidate: str,
    similarity: float,
    threshold: float,
    swap_same_meaning: float = 0.0,
) -> bool:
    """Whether a save whose vector is ``similarity``-close to a tombstone's is the
    retired text reworded: close enough, and nothing in the words tells them apart
    (``retired`` is None when its text is gone: the cosine alone decides). A swapped
    run of words (``_substitution``) tells them apart only below ``swap_same_meaning``
    (the model's ``ScoreScale``: e5 scores a swapped fact 0.956-0.988 and an in-place
    synonym, "remain" for "stay", 0.994-0.996 on the labelled set; MiniLM puts that
    synonym at 0.93, so for MiniLM the swap cue is off)."""
    if similarity < threshold:
        return False
    if retired is None:
        return True
    if difference(retired, candidate) is not None:
        return False
    return similarity >= swap_same_meaning or _substitution(retired, candidate) is None
