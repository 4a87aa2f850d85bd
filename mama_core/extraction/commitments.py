"""Commitments stated in a recognisable form, found without a model.

What counts (per language: en, de, fr, es), always in a statement, never in a question:

- the author's own future: "I'll / I will / I'm going to send …", "Ich werde … schicken",
  "Je vais envoyer …", "J'enverrai …", "Voy a mandar …", "Enviaré …";
- the author's present tense *with a due date* (how German, French and Spanish promise):
  "Ich schicke dir das bis Montag", "Je t'envoie le rapport demain", "Te mando el
  informe el viernes" — a known action verb and a date, or it is not read;
- a named person's future: "Anna will review it tomorrow", "Anna wird es prüfen",
  "Anna va relire", "Anna va a revisar", or their present tense with a due date.

What never counts, because a wrong commitment costs the owner more than a missed one:
questions, conditionals ("if I have time I'll …", "wenn", "si", "si"), hedges (maybe,
probably, try to; vielleicht; peut-être; quizás), negations ("I won't"), jokes (lol,
haha, 😂), reported speech ("I said I'll …"), "next time" habits, text in quotes or
quoted mail (lines starting with ">", everything after "On … wrote:"), code, a team's
"we" (no one person owes it), pronouns other than "I" (no name to hold to), and
verbs that promise nothing ("I'll be out", "I'll need …", "Anna will love it").

Who owes: the author for the first person, the named person otherwise. To whom: the
person the message opens by addressing ("Anna, I'll …", "@anna I'll …", "Hi Anna,"),
else the message's audience (its channel, or the owner for mail). The due date comes
from ``dates.find_due`` in the commitment's own clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from mama_core.extraction.dates import WEEKDAYS, DueHit, find_due

OWNER = "owner"
"""The owner, as a commitment names them (``mama_core.memory.inputs.OWNER_PARTY``)."""


@dataclass(frozen=True)
class Message:
    """One outside message to read: its words, who wrote it and when, and who heard it."""

    text: str
    author: str
    written_at: datetime
    audience: str = OWNER
    """Whom an unaddressed promise is made to: the channel (``#ops``), or the owner."""
    observation_id: int | None = None


@dataclass(frozen=True)
class FoundCommitment:
    """A commitment read from a message: who owes whom what, by when, said where."""

    owed_by: str
    owed_to: str
    what: str
    due: datetime | None
    start: int
    end: int
    """The span of the sentence that states it, in the message's text."""
    observation_id: int | None
    lang: str
    rule: str
    """Which rule found it (``en.first.will``), for the benchmark and the owner."""

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


# --- names ------------------------------------------------------------------------------


def _wordset(words: str) -> frozenset[str]:
    """A word list written as one string (easier to read and extend than a literal)."""
    return frozenset(words.split())


_NOT_NAMES = {
    w.lower()
    for w in _wordset(
        "I It This That There He She They We You Who What Which Someone Somebody Nobody "
        "Everyone Everybody Anyone Anybody The A An Then Also And But So Maybe Hopefully Please "
        "Thanks Team Legal Finance Marketing Sales Support Ops Engineering Design Management "
        "Today Tomorrow Tonight Nothing Everything Something Here Now Next Last Hi Hey Hello "
        "Dear Ich Er Sie Es Wir Ihr Man Das Der Die Dem Den Ein Eine Dann Jemand Niemand Keiner "
        "Morgen Heute Vielleicht Hallo Liebe Lieber Und Aber Also Je Il Elle On Nous Vous Ils "
        "Elles Ça Ca Cela Ce Qui Quelqu Personne Demain Alors Puis Et Mais Bonjour Salut Le La "
        "Les Un Une Yo Él Ella Nosotros Ellos Ellas Usted Ustedes Alguien Nadie Quien Quién "
        "Mañana Hoy Luego Entonces Y Pero Eso Esto Se El Los Las Una Hola Todo Todos Nadie "
        "Jan Feb Mar Apr Jun Jul Aug Sep Oct Nov Dec Januar Mai Juni Juli "
        # interjections that open a reply like a name would ("Sure, I'll …", "Klar, …")
        "Sure Ok Okay Yes Yeah Yep Yup No Nope Thanks Thank Great Cool Done Fine Right Alright "
        "Klar Ja Nein Gut Super Danke Perfekt Genau Alles Oui Non Merci Parfait Bien Entendu "
        "Sí Si Vale Claro Gracias Perfecto Genial Bueno Listo Sin Pas Noted Agreed Absolutely "
        # headings that open a message like a name would ("Update: I'll …")
        "Update Reminder Note Fyi Ps Re Fwd Status Summary Question Agenda Todo Action Info "
        "Hinweis Erinnerung Frage Rappel Remarque Recordatorio Nota Pregunta Aviso"
    )
} | {re.sub(r"\[.*?\]", "e", w) for names in WEEKDAYS.values() for w in names}
_NAME = r"(?P<who>[A-ZÄÖÜÉÈÁÍÓÚÑ][a-zäöüßéèêëàâîïôûçáíóúñ]+(?:\s[A-Z]\.)?)"
_ARTICLES = re.compile(
    r"(?:\b(?:the|a|an|our|my|your|der|die|das|ein|eine|unser|unsere|mein|meine|le|la|les|"
    r"un|une|notre|mon|ma|el|los|las|una|nuestro|nuestra|mi)\s+)$",
    re.IGNORECASE,
)


def _is_name(text: str, m: re.Match[str]) -> bool:
    who = m.group("who").split()[0].lower().strip(".")
    return who not in _NOT_NAMES and _ARTICLES.search(text, 0, m.start("who")) is None


# --- the rules ---------------------------------------------------------------------------

Check = Callable[[re.Match[str], str], bool]


@dataclass(frozen=True)
class Rule:
    name: str
    lang: str
    pattern: re.Pattern[str]
    third_person: bool = False
    needs_due: bool = False
    """A present tense promises only with a date ("Ich schicke es morgen")."""
    check: Check | None = None
    """Further test of the match and its clause (e.g. the verb promises something)."""


def _re(text: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(text, flags)


_EN_NOT_ACTIONS = _wordset(
    "be have need want like love hate think guess see try probably maybe never not miss die "
    "regret remember know understand hear find wonder assume bet forget lose wait feel look "
    "stay sleep eat cry laugh kill survive owe"
)
_EN_HAVE_OK = re.compile(
    r"\b(?:ready|done|finished|to you|over to|back to|sorted|in your inbox)\b", re.IGNORECASE
)


def _en_verb(m: re.Match[str], clause: str) -> bool:
    verb = m.group("verb").lower()
    if verb == "have":
        return _EN_HAVE_OK.search(clause) is not None
    if verb == "look":
        return re.search(r"\blook\s+(?:at|into|over)\b", clause, re.IGNORECASE) is not None
    return verb not in _EN_NOT_ACTIONS


_EN_ADVERBS = r"(?:(?:also|just|definitely|still|then|quickly|personally|first|gladly|happily)\s+)*"
_EN_RULES = [
    Rule(
        "en.first.will",
        "en",
        _re(
            r"\b(?:I\s*['\u2019]ll|I\s+will|I\s+shall|I['\u2019]m\s+(?:going\s+to|gonna)|I\s+am\s+going\s+to)\s+"
            + _EN_ADVERBS
            + r"(?P<verb>[a-z]+)\b",
            re.IGNORECASE,
        ),
        check=_en_verb,
    ),
    Rule(
        "en.third.will",
        "en",
        _re(
            _NAME
            + r"(?:\s*['\u2019]ll|\s+will|\s+is\s+(?:going\s+to|gonna))\s+"
            + _EN_ADVERBS
            + r"(?P<verb>[a-z]+)\b"
        ),
        third_person=True,
        check=_en_verb,
    ),
]

_DE_INFINITIVE_END = r"(?P<verb>[a-zäöüß]+(?:en|ern|eln))\s*(?=[.!,;:)]|$|\s+(?:und|aber)\s)"
_DE_NOT_FINAL = {"werden", "sein", "haben", "können", "müssen", "sollen", "wollen", "lassen"}
_DE_PRESENT_1 = (
    "schicke|sende|mache|erledige|prüfe|checke|schaue|kümmere|melde|schreibe|rufe|bereite|"
    "aktualisiere|liefere|übernehme|gebe|reiche|bringe|teste|überarbeite|korrigiere|fixe|"
    "kläre|leite|buche|organisiere|lade|stelle|sehe|setze"
)
_DE_PRESENT_3 = (
    "schickt|sendet|macht|erledigt|prüft|checkt|schaut|kümmert|meldet|schreibt|ruft|bereitet|"
    "aktualisiert|liefert|übernimmt|gibt|reicht|bringt|testet|überarbeitet|korrigiert|fixt|"
    "klärt|leitet|bucht|organisiert|lädt|stellt|sieht|setzt"
)


def _de_final_verb(m: re.Match[str], clause: str) -> bool:
    return m.group("verb").lower() not in _DE_NOT_FINAL


_DE_RULES = [
    Rule(
        "de.first.werde",
        "de",
        _re(
            r"\b(?:[Ii]ch\s+werde|werde\s+ich)\s+(?:[^.!?,;]{0,160}?\s)?" + _DE_INFINITIVE_END,
            re.IGNORECASE,
        ),
        check=_de_final_verb,
    ),
    Rule(
        "de.first.present",
        "de",
        _re(
            rf"\b(?:[Ii]ch\s+(?P<verb>{_DE_PRESENT_1})|(?P<verb2>{_DE_PRESENT_1}|mach)\s+ich)\b",
            re.IGNORECASE,
        ),
        needs_due=True,
    ),
    Rule(
        "de.third.wird",
        "de",
        _re(_NAME + r"\s+wird\s+(?:[^.!?,;]{0,160}?\s)?" + _DE_INFINITIVE_END),
        third_person=True,
        check=_de_final_verb,
    ),
    Rule(
        "de.third.present",
        "de",
        _re(_NAME + rf"\s+(?P<verb>{_DE_PRESENT_3})\b"),
        third_person=True,
        needs_due=True,
    ),
]

_FR_PRONOUNS = r"(?:(?:te|vous|lui|leur|le|la|les|en|y|me|nous)\s+|(?:l|t|m|s)['\u2019])*"
_FR_NOT_FUTURE = {
    "serai", "aurai", "pourrai", "devrai", "saurai", "verrai", "essaierai", "essayerai",
    "voudrai", "faudra", "sera", "aura", "pourra", "devra", "saura", "verra", "essaiera",
    "voudra", "plaira", "adorera",
}  # fmt: skip
_FR_PRESENT_1 = (
    "envoie|fais|regarde|vérifie|prépare|écris|appelle|relis|termine|finis|transmets|occupe|"
    "reviens|passe|livre|corrige|teste|partage|rédige|mets|charge|renvoie"
)
_FR_PRESENT_3 = (
    "envoie|fait|regarde|vérifie|prépare|écrit|appelle|relit|termine|finit|transmet|occupe|"
    "revient|passe|livre|corrige|teste|partage|rédige|met|charge|renvoie"
)


_FR_NOT_ACTIONS = _wordset(
    "être avoir essayer voir adorer aimer détester pleurer rire mourir devoir pouvoir "
    "falloir vouloir penser croire rester partir venir arriver"
)


def _fr_future(m: re.Match[str], clause: str) -> bool:
    return m.group("verb").lower() not in _FR_NOT_FUTURE


_FR_RULES = [
    Rule(
        "fr.first.aller",
        "fr",
        _re(
            r"\b(?:[Jj]e\s+)"
            + _FR_PRONOUNS
            + r"vais\s+"
            + _FR_PRONOUNS
            + r"(?P<verb>\w+(?:er|ir|re|oir))\b",
            re.IGNORECASE,
        ),
        check=lambda m, c: m.group("verb").lower() not in _FR_NOT_ACTIONS,
    ),
    Rule(
        "fr.first.future",
        "fr",
        _re(
            r"\b(?:[Jj]e\s+" + _FR_PRONOUNS + r"|[Jj]['\u2019])(?P<verb>\w+rai)\b",
            re.IGNORECASE,
        ),
        check=_fr_future,
    ),
    Rule(
        "fr.first.present",
        "fr",
        _re(
            rf"\b(?:[Jj]e\s+{_FR_PRONOUNS}|[Jj]['\u2019])(?P<verb>{_FR_PRESENT_1})\b",
            re.IGNORECASE,
        ),
        needs_due=True,
    ),
    Rule(
        "fr.third.aller",
        "fr",
        _re(
            _NAME
            + r"\s+"
            + _FR_PRONOUNS
            + r"va\s+"
            + _FR_PRONOUNS
            + r"(?P<verb>\w+(?:er|ir|re|oir))\b"
        ),
        third_person=True,
        check=lambda m, c: m.group("verb").lower() not in _FR_NOT_ACTIONS,
    ),
    Rule(
        "fr.third.future",
        "fr",
        _re(_NAME + r"\s+" + _FR_PRONOUNS + r"(?P<verb>\w+ra)\b"),
        third_person=True,
        check=_fr_future,
    ),
    Rule(
        "fr.third.present",
        "fr",
        _re(_NAME + r"\s+" + _FR_PRONOUNS + rf"(?P<verb>{_FR_PRESENT_3})\b"),
        third_person=True,
        needs_due=True,
    ),
]

_ES_PRONOUNS = r"(?:(?:te|le|les|os|lo|la|los|las|se|me|nos)\s+){0,2}"
_ES_ACTIONS = _wordset(
    "mandar enviar reenviar revisar preparar terminar llamar escribir subir compartir pasar "
    "actualizar entregar confirmar avisar corregir devolver mirar comprobar encargar ocupar "
    "arreglar organizar cerrar reservar probar leer redactar publicar"
)
"""Verbs whose future is read as a promise. A list, not a suffix: "prepararé" (I will
prepare) and "preparé" (I prepared) share their ending."""
_ES_IRREGULAR = {"hacer": "har", "poner": "pondr", "decir": "dir"}


def _es_future(ending: str) -> Check:
    forms = {inf + ending for inf in _ES_ACTIONS} | {s + ending for s in _ES_IRREGULAR.values()}

    def check(m: re.Match[str], clause: str) -> bool:
        return m.group("verb").lower() in forms

    return check


_ES_PRESENT_1 = (
    "mando|envío|envio|reviso|hago|paso|preparo|escribo|llamo|termino|miro|compruebo|"
    "actualizo|entrego|subo|comparto|encargo|ocupo|corrijo|confirmo|devuelvo|aviso|reenvío"
)
_ES_PRESENT_3 = (
    "manda|envía|envia|revisa|hace|pasa|prepara|escribe|llama|termina|mira|comprueba|"
    "actualiza|entrega|sube|comparte|encarga|ocupa|corrige|confirma|devuelve|avisa|reenvía"
)


_ES_RULES = [
    Rule(
        "es.first.ir",
        "es",
        _re(
            r"\b(?:[Yy]o\s+)?"
            + _ES_PRONOUNS
            + r"voy\s+a\s+(?P<verb>\w+?(?:ar|er|ir))(?:te|le|les|lo|la|selo|telo|melo|se)?\b",
            re.IGNORECASE,
        ),
        check=lambda m, c: (
            m.group("verb").lower() not in {"ser", "estar", "intentar", "tener", "ver"}
        ),
    ),
    Rule(
        "es.first.future",
        "es",
        _re(r"(?<![\w¿])(?:[Yy]o\s+)?" + _ES_PRONOUNS + r"(?P<verb>\w+ré)\b", re.IGNORECASE),
        check=_es_future("é"),
    ),
    Rule(
        "es.first.present",
        "es",
        _re(r"\b(?:[Yy]o\s+)?" + _ES_PRONOUNS + rf"(?P<verb>{_ES_PRESENT_1})\b", re.IGNORECASE),
        needs_due=True,
    ),
    Rule(
        "es.third.ir",
        "es",
        _re(
            _NAME
            + r"\s+"
            + _ES_PRONOUNS
            + r"va\s+a\s+(?P<verb>\w+?(?:ar|er|ir))(?:te|le|les|lo|la|selo|telo|se)?\b"
        ),
        third_person=True,
        check=lambda m, c: (
            m.group("verb").lower() not in {"ser", "estar", "intentar", "tener", "ver"}
        ),
    ),
    Rule(
        "es.third.future",
        "es",
        _re(_NAME + r"\s+" + _ES_PRONOUNS + r"(?P<verb>\w+rá)\b"),
        third_person=True,
        check=_es_future("á"),
    ),
    Rule(
        "es.third.present",
        "es",
        _re(_NAME + r"\s+" + _ES_PRONOUNS + rf"(?P<verb>{_ES_PRESENT_3})\b"),
        third_person=True,
        needs_due=True,
    ),
]

_ACK_RULES = [
    Rule(
        f"{lang}.first.ack",
        lang,
        _re(r"(?<!\w)(?P<verb>" + phrase + r")(?!\w)", re.IGNORECASE),
    )
    for lang, phrase in (
        ("en", r"on\s+it|will\s+do|consider\s+it\s+done"),
        (
            "de",
            r"ich\s+erledige\s+das|ich\s+kümmere\s+mich\s+(?:darum|drum)|ich\s+übernehme\s+das"
            r"|wird\s+erledigt",
        ),
        ("fr", r"je\s+m['\u2019]en\s+(?:charge|occupe)|je\s+m['\u2019]occupe\s+de\s+(?:ça|tout)"),
        ("es", r"yo\s+me\s+(?:encargo|ocupo)|me\s+(?:encargo|ocupo)\s+yo|lo\s+hago\s+yo"),
    )
]
"""An acknowledgement ("On it", "Ich erledige das", "Je m'en charge", "Yo me encargo")
promises what was asked before it: the sentence is the "what" the owner reviews."""

RULES: tuple[Rule, ...] = (*_EN_RULES, *_DE_RULES, *_FR_RULES, *_ES_RULES, *_ACK_RULES)

# --- what rules a sentence out ------------------------------------------------------------


def _words(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


_JOKE = re.compile(
    r"(?<!\w)(?:lol|lmao|rofl|haha\w*|hehe\w*|jk|just\s+kidding|kidding|mdr|ptdr|jaja\w*|"
    r"jeje\w*|xd|kleiner\s+scherz|nur\s+spaß|c'est\s+une\s+blague|es\s+broma)(?!\w)|"
    r"[😂🤣😜😝🙃😆]|;\)|;-\)",
    re.IGNORECASE,
)
RULED_OUT: dict[str, dict[str, re.Pattern[str]]] = {
    "en": {
        "question": _words(
            r"will\s+you",
            r"can\s+you",
            r"could\s+you",
            r"would\s+you",
            r"shall\s+I",
            r"should\s+I",
            r"do\s+you\s+want",
            r"who\s+will",
            r"when\s+will",
            r"what\s+if",
        ),
        "conditional": _words(
            r"if",
            r"unless",
            r"once",
            r"as\s+soon\s+as",
            r"assuming",
            r"provided",
            r"in\s+case",
            r"when\s+I",
            r"whenever",
            r"otherwise",
            r"depending",
        ),
        "hedge": _words(
            r"maybe",
            r"perhaps",
            r"probably",
            r"possibly",
            r"might",
            r"hopefully",
            r"try\s+to",
            r"trying\s+to",
            r"not\s+sure",
            r"i\s+think",
            r"i\s+guess",
            r"next\s+time",
            r"someday",
            r"one\s+day",
            r"in\s+theory",
            r"ideally",
            r"or\s+not",
            r"would",
            r"could",
            r"should",
        ),
        "negation": _words(
            r"not",
            r"never",
            r"won['\u2019]t",
            r"can['\u2019]t",
            r"cannot",
            r"no\s+way",
            r"don['\u2019]t",
        ),
        "reported": _words(r"said", r"says", r"told", r"claimed", r"wrote"),
    },
    "de": {
        "question": _words(
            r"kannst\s+du",
            r"könntest\s+du",
            r"wirst\s+du",
            r"soll\s+ich",
            r"sollen\s+wir",
            r"wer\s+wird",
            r"wann\s+wirst",
            r"würdest\s+du",
            r"könnten\s+sie",
            r"können\s+sie",
        ),
        "conditional": _words(
            r"wenn",
            r"falls",
            r"sofern",
            r"sobald",
            r"außer",
            r"vorausgesetzt",
            r"ansonsten",
        ),
        "hedge": _words(
            r"vielleicht",
            r"eventuell",
            r"wahrscheinlich",
            r"möglicherweise",
            r"hoffentlich",
            r"versuch\w*",
            r"ich\s+glaube",
            r"nächstes\s+mal",
            r"irgendwann",
            r"würde\w*",
            r"könnte\w*",
            r"sollte\w*",
            r"wohl",
        ),
        "negation": _words(r"nicht", r"nie", r"niemals", r"kein\w*"),
        "reported": _words(r"sagte", r"meinte", r"schrieb", r"hat\s+gesagt", r"behauptet"),
    },
    "fr": {
        "question": _words(
            r"est-ce\s+que",
            r"peux-tu",
            r"pourrais-tu",
            r"vas-tu",
            r"pouvez-vous",
            r"pourriez-vous",
            r"qui\s+va",
            r"quand\s+est-ce",
        ),
        "conditional": _words(
            r"si",
            r"s['\u2019]il",
            r"s['\u2019]ils",
            r"sauf\s+si",
            r"au\s+cas\s+où",
            r"dès\s+que",
            r"une\s+fois\s+que",
            r"quand",
            r"lorsque",
            r"sinon",
            r"à\s+condition",
        ),
        "hedge": _words(
            r"peut-être",
            r"probablement",
            r"sans\s+doute",
            r"j['\u2019]espère",
            r"essayer",
            r"j['\u2019]essaierai",
            r"je\s+pense",
            r"je\s+crois",
            r"la\s+prochaine\s+fois",
            r"un\s+jour",
            r"\w+rais",
            r"\w+rait",
            r"éventuellement",
        ),
        "negation": _words(r"ne", r"n['\u2019]\w+", r"pas", r"jamais", r"rien"),
        "reported": _words(r"a\s+dit", r"disait", r"a\s+écrit", r"prétend"),
    },
    "es": {
        "question": _words(r"puedes", r"podrías", r"quién\s+va"),
        "conditional": _words(
            r"si",
            r"a\s+menos\s+que",
            r"en\s+caso\s+de",
            r"cuando",
            r"siempre\s+que",
            r"en\s+cuanto",
            r"una\s+vez\s+que",
            r"salvo\s+que",
            r"si\s+no",
        ),
        "hedge": _words(
            r"quizás",
            r"quizá",
            r"tal\s+vez",
            r"a\s+lo\s+mejor",
            r"probablemente",
            r"intentar\w*",
            r"intento",
            r"espero",
            r"creo\s+que",
            r"la\s+próxima\s+vez",
            r"algún\s+día",
            r"\w+ría",
            r"\w+rías",
            r"ojalá",
        ),
        "negation": _words(r"no", r"nunca", r"jamás", r"nada"),
        "reported": _words(r"dijo", r"decía", r"escribió", r"ha\s+dicho", r"dice\s+que"),
    },
}


_SET_PHRASES = _words(
    r"no\s+problem",
    r"kein\s+problem",
    r"keine\s+sorge",
    r"pas\s+de\s+(?:souci|soucis|problème)",
    r"no\s+hay\s+problema",
    r"no\s+te\s+preocupes",
    r"no\s+worries",
)
"""Fixed phrases whose "no" negates nothing ("kein Problem, ich erledige das")."""


def _ruled_out(lang: str, sentence: str, after: str) -> str | None:
    """Why ``sentence`` states no commitment in ``lang`` (None: it may)."""
    sentence = _SET_PHRASES.sub(" ", sentence)
    stripped = sentence.strip()
    if stripped.endswith("?") or "¿" in stripped:
        return "question"
    if _JOKE.search(sentence) or _JOKE.match(after.lstrip()):
        return "joke"
    for reason, pattern in RULED_OUT[lang].items():
        if pattern.search(sentence):
            return reason
    return None


# --- text preparation ----------------------------------------------------------------------

_REPLY_HEADER = re.compile(
    r"^(?:On\s.+\bwrote:|Am\s.+\bschrieb\b.*:|Le\s.+\ba\s+écrit\s*:|El\s.+\bescribió:|"
    r"-{2,}\s*(?:Original Message|Forwarded message|Ursprüngliche Nachricht|Message d'origine|"
    r"Mensaje original)).*$",
    re.IGNORECASE | re.MULTILINE,
)
_QUOTED = re.compile(
    r"“[^”]*”|\"[^\"\n]*\"|«[^»]*»|„[^“”]*[“”]|```.*?```|`[^`\n]*`|^\s*>.*$",
    re.MULTILINE | re.DOTALL,
)
_SENTENCE = re.compile(r"[^\n.!?]*(?:[.!?](?<=\d\.)[^\n.!?]*)*(?:[.!?]+|\n|$)")
_VOCATIVE = re.compile(
    r"^\s*(?:(?:hi|hey|hello|dear|hallo|liebe|lieber|hej|salut|bonjour|coucou|hola|buenas)\s+)?"
    r"(?:@(?P<handle>[\w.-]+)\s*[,:!]?|"
    r"(?-i:(?P<name>[A-ZÄÖÜÉÁ][a-zäöüßéèáíóúñ]+(?:\s[A-Z]\.)?))\s*[,:!])",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r",?\s+(?:but|aber|mais|pero|though|doch)\s", re.IGNORECASE)
_DUE_LEAD = re.compile(
    r"(?:\b(?:by|until|before|on|at|in|bis|am|um|vor|spätestens|d['\u2019]ici|avant|pour|le|à|"
    r"para|antes\s+del?|el|a\s+las|hasta|dans|en)\s+)+$",
    re.IGNORECASE,
)


def visible_text(text: str) -> str:
    """``text`` with what its author did not say blanked out (same length, so spans
    stay true): quoted mail after a reply header, ``>`` lines, text in quotation marks,
    and code."""
    header = _REPLY_HEADER.search(text)
    if header is not None:
        text = text[: header.start()] + " " * (len(text) - header.start())
    return _QUOTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _addressee(text: str) -> str | None:
    m = _VOCATIVE.match(text)
    if m is None:
        return None
    if m.group("handle"):
        return "@" + m.group("handle")
    name = m.group("name")
    return None if name.split()[0].lower() in _NOT_NAMES else name


def _sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in _SENTENCE.finditer(text):
        if m.group(0).strip():
            spans.append((m.start(), m.end()))
    return spans


# --- finding ------------------------------------------------------------------------------


MAX_TEXT = 20_000
"""Only a message's first this many characters are read (a promise is not buried deeper)."""
MAX_SENTENCE = 600
"""A longer "sentence" (a wall of text without punctuation) is not read: no promise in
a recognisable form needs it, and the rules' cost grows with its length."""


def find_commitments(message: Message, zone: ZoneInfo) -> list[FoundCommitment]:
    """The commitments ``message`` states, in the order they are said, each with its
    due time resolved in ``zone`` (the owner's)."""
    text = visible_text(message.text[:MAX_TEXT])
    to_whom = _addressee(text) or message.audience
    found: list[FoundCommitment] = []
    for s_start, s_end in _sentences(text):
        if s_end - s_start <= MAX_SENTENCE:
            found.extend(_in_sentence(message, text, s_start, s_end, to_whom, zone))
    return found


def _in_sentence(
    message: Message, text: str, s_start: int, s_end: int, to_whom: str, zone: ZoneInfo
) -> list[FoundCommitment]:
    sentence = text[s_start:s_end]
    hits: list[tuple[int, Rule, re.Match[str]]] = []
    for rule in RULES:
        for m in rule.pattern.finditer(text, s_start, s_end):
            if rule.third_person and not _is_name(text, m):
                continue
            hits.append((m.start(), rule, m))
    # At one place the longest reading holds, and one that needs no date before one that
    # does ("ich erledige das" the acknowledgement, not "ich erledige" waiting for a date).
    hits.sort(key=lambda h: (h[0], -len(h[2].group(0)), h[1].needs_due))
    kept: list[tuple[Rule, re.Match[str]]] = []
    for _, rule, m in hits:
        if kept and m.start() < kept[-1][1].end():
            continue  # two rules read the same words: the first (by position) holds
        kept.append((rule, m))
    out: list[FoundCommitment] = []
    for i, (rule, m) in enumerate(kept):
        clause_end = kept[i + 1][1].start() if i + 1 < len(kept) else s_end
        brk = _CLAUSE_BREAK.search(text, m.end(), clause_end)
        if brk is not None:
            clause_end = brk.start()
        clause = text[m.start() : clause_end]
        if _ruled_out(rule.lang, sentence, text[s_end : s_end + 12]) is not None:
            return []
        if rule.check is not None and not rule.check(m, clause):
            continue
        due = find_due(text, rule.lang, message.written_at, zone, m.start(), clause_end)
        if due is None and i == 0:  # "Tomorrow I'll send it": the date may lead the sentence
            due = find_due(text, rule.lang, message.written_at, zone, s_start, m.start())
        if rule.needs_due and due is None:
            continue
        owed_by = m.group("who") if rule.third_person else message.author
        out.append(
            FoundCommitment(
                owed_by=owed_by,
                owed_to=to_whom,
                what=" ".join(sentence.split())
                if rule.name.endswith(".ack")
                else _what(text, m, rule, clause_end, due),
                due=None if due is None else due.due,
                start=s_start + len(sentence) - len(sentence.lstrip()),
                end=s_start + len(sentence.rstrip()),
                observation_id=message.observation_id,
                lang=rule.lang,
                rule=rule.name,
            )
        )
    return out


def _what(text: str, m: re.Match[str], rule: Rule, clause_end: int, due: DueHit | None) -> str:
    """The promised act in the author's words: the clause from its verb (German future:
    from after the auxiliary), without the due phrase and the word that leads into it."""
    if m.groupdict().get("verb2"):
        start = m.start("verb2")
    elif rule.name in ("de.first.werde", "de.third.wird"):
        start = _after_aux(text, m)
    else:
        start = m.start("verb")
    words = text[start:clause_end]
    if due is not None and start <= due.start < clause_end:
        before = _DUE_LEAD.sub("", text[start : due.start])
        words = f"{before} {text[min(due.end, clause_end) : clause_end]}"
    elif due is not None and due.start < start < due.end:
        words = text[due.end : clause_end]
    return " ".join(words.split()).strip(" ,;:.!-—")


def _after_aux(text: str, m: re.Match[str]) -> int:
    aux = re.search(r"\b(?:werde|wird)\b", m.group(0), re.IGNORECASE)
    if aux is None:
        return m.start()
    lead = re.match(r"\s*ich\b", m.group(0)[aux.end() :], re.IGNORECASE)
    return m.start() + aux.end() + (lead.end() if lead else 0) + 1
