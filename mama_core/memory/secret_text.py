"""The readings of a text the secret scan looks at, so a disguised token is seen.

A person (or an agent) can paste a token that does not look like itself:
full-width or "mathematical" letters, Cyrillic look-alikes, zero-width
characters or line breaks inside it, hex, base64 or URL encoding. Each reading
here undoes one such disguise:

* ``normal``: NFKC, then homoglyph folding from Unicode's confusables table
  (TR39, as shipped by ``confusable-homoglyphs``) for the Latin, Greek,
  Cyrillic and symbol letters that look like ASCII letters or digits (CJK,
  Hangul and Kana are left as they are: they carry the owners' own prose),
  then invisible characters removed;
* ``compact``: ``normal`` with every whitespace removed, for prefixed vendor
  tokens split across spaces or lines;
* ``decoded``: URL-decoding, and every hex or base64 run that decodes to
  printable text (one level: a decoded text is not decoded again).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
"""Zero-width, soft-hyphen, joiner, direction and variation marks: invisible."""
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9A-Fa-f]{2}){12,}")
_ESCAPED_HEX = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){12,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_FOLDED_BLOCKS = ((0x00C0, 0x058F), (0x1D00, 0x1DBF), (0x1E00, 0x24FF), (0x1D400, 0x1D7FF))
"""Latin extensions to Armenian, phonetic, Latin additional to enclosed: folded.

CJK, Hangul, Kana and the other scripts owners write in are never folded."""


@cache
def _fold_table() -> dict[int, str]:
    """Look-alike code point -> the ASCII letter or digit it imitates."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data: dict[str, list[dict[str, str]]] = json.loads(raw)
    table: dict[int, str] = {}

    def foldable(ch: str) -> bool:
        return len(ch) == 1 and any(lo <= ord(ch) <= hi for lo, hi in _FOLDED_BLOCKS)

    for key, glyphs in data.items():
        if len(key) == 1 and key.isascii() and key.isalnum():
            for glyph in glyphs:
                if foldable(glyph["c"]):
                    table.setdefault(ord(glyph["c"]), key)
    for key, glyphs in data.items():
        if foldable(key):
            for glyph in glyphs:
                ch = glyph["c"]
                if len(ch) == 1 and ch.isascii() and ch.isalnum():
                    table.setdefault(ord(key), ch)
                    break
    return table


def normal(text: str) -> str:
    """``text`` in NFKC with look-alike letters folded and invisible marks removed."""
    text = unicodedata.normalize("NFKC", text)
    return _INVISIBLE.sub("", text.translate(_fold_table()))


@dataclass(frozen=True)
class Joined:
    """A text with its whitespace removed, and where its words used to start.

    A token split by spaces or line breaks is whole again in ``text``. A match
    only counts when it starts where a word started (``starts``) and every
    piece it joins on looks like part of a token (see :meth:`token_run_end`),
    so the joining cannot make a token out of the middle of a longer run or
    out of ordinary words ("ghp_ is the prefix of GitHub tokens").
    """

    text: str
    starts: tuple[int, ...]
    pieces: tuple[int, ...]
    """Where each whitespace-separated piece of the original begins in ``text``."""

    def candidate_starts(self) -> Iterator[int]:
        """Word starts in a piece followed by a token-like piece: only there can
        joining make a match the unjoined text did not have."""
        bounds = [*self.pieces, len(self.text)]
        index = 0
        for start in self.starts:
            while index + 1 < len(self.pieces) and self.pieces[index + 1] <= start:
                index += 1
            if index + 1 >= len(self.pieces):
                return
            following = self.text[self.pieces[index + 1] : bounds[index + 2]]
            if _TOKEN_PIECE.search(following):
                yield start

    def token_run_end(self, start: int) -> int:
        """Where the run of token-like pieces after the piece holding ``start`` ends:
        a match may join pieces up to there, never into the plain words after."""
        index = bisect.bisect_right(self.pieces, start)
        while index < len(self.pieces):
            end = self.pieces[index + 1] if index + 1 < len(self.pieces) else len(self.text)
            if not _TOKEN_PIECE.search(self.text[self.pieces[index] : end]):
                return self.pieces[index]
            index += 1
        return len(self.text)


_TOKEN_PIECE = re.compile(r"\d|.[A-Z]|[_+/=-]|^.$")
"""A digit, an upper-case letter after the first, a token symbol or a single
character (``g h p _ A 1 ...``): not a plain word."""


def compact(text: str) -> Joined:
    """``text`` without any whitespace, with where its words and pieces began."""
    out: list[str] = []
    starts: list[int] = []
    pieces: list[int] = []
    previous = " "
    for ch in text:
        if ch.isspace():
            previous = ch
            continue
        if previous.isspace():
            pieces.append(len(out))
        if not previous.isalnum():
            starts.append(len(out))
        out.append(ch)
        previous = ch
    return Joined("".join(out), tuple(starts), tuple(pieces))


def decoded(text: str, *, whole: bool = True) -> Iterator[tuple[str, str]]:
    """(how it was encoded, decoded text) for each encoded run of ``text``
    (and ``text`` URL-decoded as a whole, if ``whole``)."""
    if whole and _PERCENT.search(text):
        unquoted = urllib.parse.unquote(text)
        if unquoted != text:
            yield "URL-encoded", unquoted
    for run in _ESCAPED_HEX.findall(text):
        found = _printable(_from_hex(run.replace("\\x", "")))
        if found is not None:
            yield "hex-encoded", found
    for run in _HEX_RUN.findall(text):
        found = _printable(_from_hex(run))
        if found is not None:
            yield "hex-encoded", found
    for run in _BASE64_RUN.findall(text):
        found = _printable(_from_base64(run))
        if found is not None:
            yield "base64-encoded", found


def base64_text(run: str) -> str | None:
    """``run`` decoded from base64 if that gives printable text, else None."""
    return _printable(_from_base64(run))


def _from_hex(run: str) -> bytes | None:
    try:
        return bytes.fromhex(run)
    except ValueError:
        return None


def _from_base64(run: str) -> bytes | None:
    padded = run.rstrip("=")
    padded += "=" * (-len(padded) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None


def _printable(raw: bytes | None) -> str | None:
    """``raw`` as text if it is all printable UTF-8 of a useful length, else None."""
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 12 or not all(ch.isprintable() or ch in "\n\r\t" for ch in text):
        return None
    return text
